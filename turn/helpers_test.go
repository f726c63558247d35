package turn_test

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/Papercusp/chat-protocol-go/cards"
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
	conversation = "c-1"
	worker       = "worker"
	alice        = "alice"
)

var (
	key     = replay.Key{ConversationID: conversation, TurnID: "t-1"}
	epoch   = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	helpful = interactions.SchemaRef{ID: "helpful", Revision: 1}
	person  = interactions.Caller{Principal: "alice", Tenant: "t"}
)

// host is one process's lightweight host: a memory window, recovery and
// cards on the in-memory stores, the registry of running turns, and clocks
// that stand still until a test moves them.
type host struct {
	t       *testing.T
	window  replay.Window
	memory  *replay.Memory
	store   *recovery.MemoryStore
	rec     *recovery.TurnRecovery
	runs    *turn.Runs
	cards   *interactions.Resolver
	schemas *jsonschema.Registry
	clock   *fakeclock.Clock // the envelopes' at and the cards' clock
	leases  *fakeclock.Clock // recovery's clock
	authz   allowList
}

// allowList authorizes the worker for everything and alice to cancel and
// read; anyone else nothing.
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

func newHost(t *testing.T) *host {
	return newHostOn(t, replay.NewMemory(nil))
}

// newHostOn is newHost over a given window, with w's inner memory window
// found when it is one.
func newHostOn(t *testing.T, w replay.Window) *host {
	t.Helper()
	h := &host{t: t, window: w, store: recovery.NewMemoryStore(nil), runs: turn.NewRuns(),
		schemas: jsonschema.NewRegistry(), clock: fakeclock.New(epoch), leases: fakeclock.New(epoch)}
	if m, ok := w.(*replay.Memory); ok {
		h.memory = m
	}
	h.rec = recovery.New(recovery.Host{Store: h.store, Authorizer: h.authz, Aborter: h.runs}, &recovery.Options{Now: h.leases.Now})
	require.NoError(t, h.schemas.Register(helpful, []byte(`{"type":"object","properties":{"optionId":{"enum":["yes","no"]}},"required":["optionId"]}`)))
	cardStore := interactions.NewMemoryStore(func(c interactions.Caller, conv string) interactions.Authority {
		if c != person {
			return interactions.Authority{}
		}
		return interactions.Authority{Active: true, Scope: interactions.Scope{Conversation: conv, Caller: c}}
	}, nil)
	var err error
	h.cards, err = interactions.New(cardStore, h.schemas, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec, Clock: h.clock.Now})
	require.NoError(t, err)
	return h
}

// options are the Producer options of the host's turns.
func (h *host) options() *turn.Options {
	return &turn.Options{Recovery: h.rec, Runs: h.runs, Caller: worker, Cards: h.cards,
		SchemaText: h.schemas.SchemaJSON, Now: h.clock.Now}
}

// start starts (or resumes) a turn of the conversation.
func (h *host) start(id string) *turn.Producer {
	h.t.Helper()
	p, err := turn.Start(h.t.Context(), h.window, replay.Key{ConversationID: conversation, TurnID: id}, h.options())
	require.NoError(h.t, err)
	return p
}

// envelopes reads every retained envelope of turn id, parsed, and checks
// that their seqs run from the window's Lower+1 to its Latest.
func (h *host) envelopes(id string) []chatprotocol.ChatEventEnvelope {
	h.t.Helper()
	k := replay.Key{ConversationID: conversation, TurnID: id}
	b, err := h.window.Bounds(h.t.Context(), k)
	require.NoError(h.t, err)
	var out []chatprotocol.ChatEventEnvelope
	for cursor := b.Lower; cursor < b.Latest; {
		_, frames, err := h.window.Read(h.t.Context(), k, cursor, replay.DefaultPageBytes)
		require.NoError(h.t, err)
		for _, f := range frames {
			env, err := chatprotocol.ParseEnvelope(f.Data)
			require.NoError(h.t, err)
			require.Equal(h.t, cursor+1, env.Seq, "contiguous seqs")
			out = append(out, env)
			cursor = f.Seq
		}
	}
	return out
}

// state applies the envelopes of the turns ids, in order, to one state:
// what a client following them holds.
func (h *host) state(ids ...string) *chatprotocol.ChatStateV1 {
	h.t.Helper()
	s := chatprotocol.NewChatStateV1(conversation)
	for _, id := range ids {
		for _, env := range h.envelopes(id) {
			require.NoError(h.t, s.Apply(env), "seq %d of %s", env.Seq, id)
		}
	}
	return s
}

// refOf is the recovery turn of turn id.
func refOf(id string) recovery.TurnRef { return recovery.TurnRef{Conversation: conversation, Turn: id} }

// types lists the event types of envs.
func types(envs []chatprotocol.ChatEventEnvelope) []string {
	out := make([]string, len(envs))
	for i, e := range envs {
		out[i] = e.Event.EventType()
	}
	return out
}

// helpfulCard is the card the tests ask.
func helpfulCard(id string) interactions.NewCard {
	return interactions.NewCard{Key: interactions.Key{CorrelationID: id}, Answerer: person, Schema: helpful,
		Spec: cards.CardSpec{Prompt: "Was this helpful?", AllowDecline: true, TimeoutMs: time.Minute.Milliseconds(),
			Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio,
				Options: []cards.CardOption{{ID: "yes", Label: "Yes"}, {ID: "no", Label: "No"}}}}}
}

// counter is a tool that counts its launches and returns its output.
type counter struct {
	launches atomic.Int64
	output   string
}

func (c *counter) tool(context.Context) (json.RawMessage, error) {
	c.launches.Add(1)
	return json.RawMessage(c.output), nil
}

// gate is a tool that blocks until released or its ctx ends, recording
// how it ended.
type gate struct {
	started  chan struct{}
	release  chan struct{}
	once     sync.Once
	ctxEnded atomic.Bool
}

func newGate() *gate { return &gate{started: make(chan struct{}), release: make(chan struct{})} }

func (g *gate) tool(ctx context.Context) (json.RawMessage, error) {
	g.once.Do(func() { close(g.started) })
	select {
	case <-g.release:
		return json.RawMessage(`{"done":true}`), nil
	case <-ctx.Done():
		g.ctxEnded.Store(true)
		return nil, &turn.ToolError{Status: chatprotocol.ToolResultCancelled}
	}
}
