package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/internal/kit/fakeclock"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	convID = "c-1"
	worker = "worker"
	alice  = "alice"
)

var (
	epoch    = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	approval = interactions.SchemaRef{ID: "approval", Revision: 1}
	question = interactions.SchemaRef{ID: "question", Revision: 1}
	person   = interactions.Caller{Principal: "alice", Tenant: "t"}
	// fast is the retry policy of the tests: no waiting to speak of.
	fast = agent.Retry{Base: time.Millisecond, Max: time.Millisecond}
)

// stores are what the processes of a host share: the window, the recovery
// store and the cards.
type stores struct {
	t       testing.TB
	window  replay.Window
	store   *recovery.MemoryStore
	cards   *interactions.Resolver
	schemas *jsonschema.Registry
	clock   *fakeclock.Clock
}

// process is one process of the host: its recovery component and its
// registry of running turns over the shared stores.
type process struct {
	*stores
	rec  *recovery.TurnRecovery
	runs *turn.Runs
}

// allowList authorizes the worker for everything and alice to cancel and
// read.
type allowList struct{}

func (allowList) Authorize(_ context.Context, caller string, _ recovery.TurnRef, action recovery.Action) error {
	switch {
	case caller == worker:
		return nil
	case caller == alice && (action == recovery.ActionCancel || action == recovery.ActionRead):
		return nil
	}
	return refusal.ErrUnauthorized
}

func newStores(t testing.TB) *stores {
	t.Helper()
	s := &stores{t: t, window: replay.NewMemory(nil), store: recovery.NewMemoryStore(nil),
		schemas: jsonschema.NewRegistry(), clock: fakeclock.New(epoch)}
	require.NoError(t, s.schemas.Register(approval, []byte(`{"type":"object"}`)))
	require.NoError(t, s.schemas.Register(question, []byte(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)))
	cardStore := interactions.NewMemoryStore(func(c interactions.Caller, conv string) interactions.Authority {
		if c != person {
			return interactions.Authority{}
		}
		return interactions.Authority{Active: true, Scope: interactions.Scope{Conversation: conv, Caller: c}}
	}, nil)
	var err error
	s.cards, err = interactions.New(cardStore, s.schemas, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec, Clock: s.clock.Now})
	require.NoError(t, err)
	return s
}

// process starts a process on the stores.
func (s *stores) process() *process {
	runs := turn.NewRuns()
	return &process{stores: s, runs: runs,
		rec: recovery.New(recovery.Host{Store: s.store, Authorizer: allowList{}, Aborter: runs}, &recovery.Options{Now: s.clock.Now})}
}

// start starts or resumes turn id on w (the shared window when nil).
func (pr *process) start(w replay.Window, id string) (*turn.Producer, error) {
	if w == nil {
		w = pr.window
	}
	return turn.Start(pr.t.Context(), w, replay.Key{ConversationID: convID, TurnID: id},
		&turn.Options{Recovery: pr.rec, Runs: pr.runs, Caller: worker, Cards: pr.cards,
			SchemaText: pr.schemas.SchemaJSON, Now: pr.clock.Now})
}

// mustStart is start that must succeed.
func (pr *process) mustStart(id string) *turn.Producer {
	pr.t.Helper()
	p, err := pr.start(nil, id)
	require.NoError(pr.t, err)
	return p
}

// cancel cancels turn id as alice.
func (pr *process) cancel(id string) {
	require.NoError(pr.t, pr.rec.Cancel(pr.t.Context(), alice, recovery.TurnRef{Conversation: convID, Turn: id}))
}

// envelopes reads every envelope of turn id, checking that the seqs run
// from 1 to the latest, each once.
func (s *stores) envelopes(id string) []chatprotocol.ChatEventEnvelope {
	s.t.Helper()
	k := replay.Key{ConversationID: convID, TurnID: id}
	b, err := s.window.Bounds(s.t.Context(), k)
	require.NoError(s.t, err)
	require.Zero(s.t, b.Lower)
	var out []chatprotocol.ChatEventEnvelope
	for cursor := int64(0); cursor < b.Latest; {
		_, frames, err := s.window.Read(s.t.Context(), k, cursor, replay.DefaultPageBytes)
		require.NoError(s.t, err)
		require.NotEmpty(s.t, frames)
		for _, f := range frames {
			env, err := chatprotocol.ParseEnvelope(f.Data)
			require.NoError(s.t, err)
			require.Equal(s.t, cursor+1, env.Seq, "contiguous seqs")
			out = append(out, env)
			cursor = f.Seq
		}
	}
	return out
}

// state applies the envelopes of the turns ids to one state, as a client
// following them would.
func (s *stores) state(ids ...string) *chatprotocol.ChatStateV1 {
	s.t.Helper()
	st := chatprotocol.NewChatStateV1(convID)
	for _, id := range ids {
		for _, env := range s.envelopes(id) {
			require.NoError(s.t, st.Apply(env), "seq %d of %s", env.Seq, id)
		}
	}
	return st
}

// types lists the event types of envs, a lifecycle as lifecycle:status.
func types(envs []chatprotocol.ChatEventEnvelope) []string {
	out := make([]string, len(envs))
	for i, e := range envs {
		out[i] = e.Event.EventType()
		if l, ok := e.Event.(*chatprotocol.LifecycleEvent); ok {
			out[i] += ":" + string(l.Status)
		}
	}
	return out
}

// of returns the events of envs of type T, in order.
func of[T chatprotocol.Event](envs []chatprotocol.ChatEventEnvelope) []T {
	var out []T
	for _, e := range envs {
		if ev, ok := e.Event.(T); ok {
			out = append(out, ev)
		}
	}
	return out
}

// stepFunc drives the sink with one scripted model step.
type stepFunc func(ctx context.Context, req *agent.Request, sink ingest.Sink) error

// script is a scripted model: the step it plays is chosen by the number of
// assistant messages in the request (of tool messages with byResults: a
// step interrupted before its calls is played again), so that a resumed
// turn goes on where its stream stands; it records every request.
type script struct {
	mu        sync.Mutex
	steps     []stepFunc
	byResults bool
	reqs      []agent.Request
}

// model is the script as an [agent.Model].
func (s *script) model() agent.Model {
	return agent.ModelFunc(func(ctx context.Context, req *agent.Request, sink ingest.Sink) (agent.Reply, error) {
		s.mu.Lock()
		cp := *req
		cp.Messages = slices.Clone(req.Messages)
		s.reqs = append(s.reqs, cp)
		s.mu.Unlock()
		i := 0
		counted := agent.RoleAssistant
		if s.byResults {
			counted = agent.RoleTool
		}
		for _, m := range req.Messages {
			if m.Role == counted {
				i++
			}
		}
		if i >= len(s.steps) {
			i = len(s.steps) - 1
		}
		return agent.Reply{}, s.steps[i](ctx, req, sink)
	})
}

// requests returns the requests the model got.
func (s *script) requests() []agent.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// tokens is a usage of n tokens.
func tokens(n int64) chatprotocol.Usage { return chatprotocol.Usage{TotalTokens: &n} }

// say is a step that answers text and uses n tokens.
func say(text string, n int64) stepFunc {
	return func(ctx context.Context, _ *agent.Request, sink ingest.Sink) error {
		return errors.Join(sink.Provenance(ctx, "test", "m-1", ""), sink.Delta(ctx, text),
			sink.Usage(ctx, tokens(n)), sink.Complete(ctx, "end_turn"))
	}
}

// ask is a step that says text, then asks for calls, and uses n tokens.
func ask(text string, n int64, calls ...agent.Call) stepFunc {
	return func(ctx context.Context, _ *agent.Request, sink ingest.Sink) error {
		if err := sink.Provenance(ctx, "test", "m-1", ""); err != nil {
			return err
		}
		if text != "" {
			if err := sink.Delta(ctx, text); err != nil {
				return err
			}
		}
		for _, c := range calls {
			if err := sink.AnnounceToolCall(ctx, c.ID, c.Name, c.Input); err != nil {
				return err
			}
		}
		return errors.Join(sink.Usage(ctx, tokens(n)), sink.Complete(ctx, "tool_use"))
	}
}

// call is a call of tool name with input {"q":q}.
func call(id, name, q string) agent.Call {
	return agent.Call{ID: id, Name: name, Input: json.RawMessage(`{"q":"` + q + `"}`)}
}

// counter is a tool that counts its launches by input and echoes the input.
type counter struct {
	mu       sync.Mutex
	launches map[string]int
	total    atomic.Int64
}

func (c *counter) run(_ context.Context, input json.RawMessage) (json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.launches == nil {
		c.launches = map[string]int{}
	}
	c.launches[string(input)]++
	c.total.Add(1)
	return json.RawMessage(`{"found":` + string(input) + `}`), nil
}

// max is the most launches of one input.
func (c *counter) max() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	most := 0
	for _, n := range c.launches {
		most = max(most, n)
	}
	return most
}

// searchTool is a tool named search that runs fn.
func searchTool(fn func(context.Context, json.RawMessage) (json.RawMessage, error)) agent.Tool {
	return agent.Tool{Spec: agent.ToolSpec{Name: "search", Description: "Searches the help center."}, Run: fn}
}

// answerCard is the person's answer to the card of correlation id: a
// submit with value, or another action.
func (s *stores) answerCard(id string, action cards.CardAction, value string) {
	s.t.Helper()
	resp := cards.CardResponse{Action: action, CorrelationID: id}
	if value != "" {
		resp.Value = json.RawMessage(value)
	}
	_, err := s.cards.Answer(s.t.Context(), person, interactions.Key{Conversation: convID, CorrelationID: id},
		interactions.Submission{ID: "s-" + id, Response: resp})
	require.NoError(s.t, err)
}

// confirmCard is an approval card for a call.
func confirmCard(c agent.Call) (interactions.NewCard, bool) {
	return interactions.NewCard{Answerer: person, Schema: approval,
		Spec: cards.CardSpec{Prompt: "Run " + c.Name + "?", AllowDecline: true}}, true
}

// questionCard is the card of an ask-the-user tool: a text question.
func questionCard(agent.Call) (interactions.NewCard, bool) {
	return interactions.NewCard{Answerer: person, Schema: question,
		Spec: cards.CardSpec{Prompt: "Which order?", AllowDecline: true,
			Presentation: &cards.CardPresentation{Kind: cards.CardKindText}}}, true
}

// within fails the test unless ch yields within a few seconds.
func within[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("timed out")
		var zero T
		return zero
	}
}

// refOf is the recovery turn of turn id.
func refOf(id string) recovery.TurnRef { return recovery.TurnRef{Conversation: convID, Turn: id} }

// effect is the effect of slot tool-k in rec.
func effect(t *testing.T, rec recovery.TurnRecord, k int) recovery.EffectRecord {
	t.Helper()
	id := "tool-" + string(rune('0'+k))
	for _, e := range rec.Effects {
		if e.ID == id {
			return e
		}
	}
	t.Fatalf("no effect %s", id)
	return recovery.EffectRecord{}
}
