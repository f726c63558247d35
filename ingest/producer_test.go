package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// allowAll authorizes every caller for everything.
type allowAll struct{}

func (allowAll) Authorize(context.Context, string, recovery.TurnRef, recovery.Action) error {
	return nil
}

// producerTurn is a turn producer on a memory window with recovery on the
// memory store, as a host runs one.
type producerTurn struct {
	window *replay.Memory
	rec    *recovery.TurnRecovery
	key    replay.Key
	p      *turn.Producer
}

func startTurn(t *testing.T) *producerTurn {
	t.Helper()
	pt := &producerTurn{window: replay.NewMemory(nil), key: replay.Key{ConversationID: "c-1", TurnID: "t-1"}}
	pt.rec = recovery.New(recovery.Host{Store: recovery.NewMemoryStore(nil), Authorizer: allowAll{}}, nil)
	p, err := turn.Start(t.Context(), pt.window, pt.key, &turn.Options{Recovery: pt.rec, Caller: "worker"})
	require.NoError(t, err)
	pt.p = p
	return pt
}

// end returns the turn's last envelope, once the window says it ended, and
// the status recovery holds.
func (pt *producerTurn) end(t *testing.T) (chatprotocol.ChatEventEnvelope, recovery.TurnStatus) {
	t.Helper()
	b, err := pt.window.Bounds(t.Context(), pt.key)
	require.NoError(t, err)
	require.True(t, b.Ended, "the window ended")
	_, frames, err := pt.window.Read(t.Context(), pt.key, b.Latest-1, 0)
	require.NoError(t, err)
	require.Len(t, frames, 1)
	env, err := chatprotocol.ParseEnvelope(frames[0].Data)
	require.NoError(t, err)
	rec, err := pt.rec.Load(t.Context(), "worker", recovery.TurnRef{Conversation: "c-1", Turn: "t-1"})
	require.NoError(t, err)
	return env, rec.Status
}

// TestLongStopReasonEndsTheTurn: a 2 MiB stop reason or error message,
// through ProducerSink into a turn producer, still ends the turn, with the
// text cut to turn.MaxEndTextBytes.
func TestLongStopReasonEndsTheTurn(t *testing.T) {
	long := strings.Repeat("ü", 1<<20) // 2 MiB
	start := `data: {"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":5,"output_tokens":1}}}` + "\n\n"
	for _, c := range []struct {
		label, tail string
		status      chatprotocol.LifecycleStatus
	}{
		{"stop reason", `data: {"type":"message_delta","delta":{"stop_reason":"` + long + `"},"usage":{"output_tokens":9}}` + "\n\n" +
			`data: {"type":"message_stop"}` + "\n\n", chatprotocol.LifecycleCompleted},
		{"error message", `data: {"type":"error","error":{"type":"api_error","message":"` + long + `"}}` + "\n\n", chatprotocol.LifecycleFailed},
	} {
		pt := startTurn(t)
		err := ingest.Read(t.Context(), ingest.AnthropicMessages, strings.NewReader(start+c.tail), ingest.ProducerSink(pt.p), nil)
		require.NoError(t, err, c.label)
		env, status := pt.end(t)
		end, ok := env.Event.(*chatprotocol.LifecycleEvent)
		require.True(t, ok, c.label)
		assert.Equal(t, c.status, end.Status, c.label)
		assert.Equal(t, string(c.status), string(status), c.label)
		if c.status == chatprotocol.LifecycleCompleted {
			assert.Equal(t, long[:turn.MaxEndTextBytes], end.Reason, c.label)
			assert.Equal(t, int64(5+9), *end.Usage.TotalTokens, c.label)
		}
	}
}
