package ingestkit

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// allowAll lets every caller do everything: the kit's turns have one.
type allowAll struct{}

func (allowAll) Authorize(context.Context, string, recovery.TurnRef, recovery.Action) error {
	return nil
}

// Launches counts the launches of each tool; it is safe for concurrent use,
// as a step's calls run concurrently.
type Launches struct {
	mu sync.Mutex
	n  map[string]int
}

// Of returns the launches of the tool named name.
func (l *Launches) Of(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n[name]
}

// Tools are the tools the recorded tool steps call, get_weather and
// get_time, each counting its launches in launched.
func Tools(launched *Launches) []agent.Tool {
	run := func(name, output string) func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return func(context.Context, json.RawMessage) (json.RawMessage, error) {
			launched.mu.Lock()
			defer launched.mu.Unlock()
			if launched.n == nil {
				launched.n = map[string]int{}
			}
			launched.n[name]++
			return json.RawMessage(output), nil
		}
	}
	return []agent.Tool{
		{Spec: agent.ToolSpec{Name: "get_weather", Schema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}}}`)}, Run: run("get_weather", `{"temp_c":18,"sky":"sunny"}`)},
		{Spec: agent.ToolSpec{Name: "get_time", Schema: json.RawMessage(`{"type":"object","properties":{"tz":{"type":"string"}}}`)}, Run: run("get_time", `{"time":"14:05"}`)},
	}
}

// RunTurn runs loop on a new turn of question on memory stores (a replay
// window and recovery) and returns the loop's outcome and the turn as the
// version-1 state holds it after its frames.
func RunTurn(t testing.TB, loop *agent.Loop, question string) (agent.Outcome, *chatprotocol.TurnState) {
	t.Helper()
	ctx := context.Background()
	w := replay.NewMemory(nil)
	runs := turn.NewRuns()
	rec := recovery.New(recovery.Host{Store: recovery.NewMemoryStore(nil), Authorizer: allowAll{}, Aborter: runs}, nil)
	key := replay.Key{ConversationID: "c-1", TurnID: "t-1"}
	p, err := turn.Start(ctx, w, key, &turn.Options{Recovery: rec, Runs: runs, Caller: "worker"})
	require.NoError(t, err)
	out, err := loop.Run(ctx, p, []agent.Message{{Role: agent.RoleUser, Text: question}})
	require.NoError(t, err)
	s := chatprotocol.NewChatStateV1(key.ConversationID)
	_, frames, err := w.Read(ctx, key, 0, 1<<20)
	require.NoError(t, err)
	for _, f := range frames {
		env, err := chatprotocol.ParseEnvelope(f.Data)
		require.NoError(t, err)
		require.NoError(t, s.Apply(env))
	}
	state, ok := s.Turn(key.TurnID)
	require.True(t, ok)
	return out, state
}

// AssertAnswered checks a turn of recorded steps that asked for calls tools
// and then answered ending with text: completed after two steps, each tool
// launched once with an ok result, the turn's usage the sum of the steps'.
func AssertAnswered(t testing.TB, out agent.Outcome, tt *chatprotocol.TurnState, launched *Launches, calls int, text string) {
	t.Helper()
	assert.Equal(t, chatprotocol.LifecycleCompleted, out.Status)
	assert.Equal(t, chatprotocol.LifecycleCompleted, tt.Status)
	assert.Equal(t, 2, out.Steps)
	require.Len(t, tt.Steps, 2)
	require.Len(t, tt.ToolCalls, calls)
	for _, c := range tt.ToolCalls {
		assert.Equal(t, chatprotocol.ToolCallStatus("ok"), c.Status, c.Name)
		assert.Equal(t, 1, launched.Of(c.Name), c.Name)
	}
	assert.True(t, strings.HasSuffix(tt.Text(), text), "%q", tt.Text())
	require.NotNil(t, tt.Usage)
	require.NotNil(t, tt.Steps[0].Usage)
	require.NotNil(t, tt.Steps[1].Usage)
	assert.Equal(t, *tt.Steps[0].Usage.TotalTokens+*tt.Steps[1].Usage.TotalTokens, *tt.Usage.TotalTokens)
}
