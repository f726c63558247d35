package replay

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

type allowAll struct{}

func (allowAll) Authorize(context.Context, string, recovery.TurnRef, recovery.Action) error {
	return nil
}

// TestRecoverySourceServesResume: a lightweight host, a Memory window and
// no store, resumes a reconnecting reader through recovery.TurnRecovery.
func TestRecoverySourceServesResume(t *testing.T) {
	m := NewMemory(&MemoryOptions{MaxFrames: 4})
	key := Key{"conv", "turn"}
	appendDeltas(t, m, key, 1, 6, "x")
	r := recovery.New(recovery.Host{Authorizer: allowAll{}, Replay: RecoverySource(m)}, nil)
	ref := recovery.TurnRef{Conversation: "conv", Turn: "turn"}

	win, frames, err := r.Resume(t.Context(), "alice", ref, 3)
	require.NoError(t, err)
	assert.Equal(t, recovery.Window{Lower: 2, Latest: 6}, win)
	_, want, err := m.Read(t.Context(), key, 3)
	require.NoError(t, err)
	require.Len(t, frames, 3)
	for i, f := range frames {
		assert.Equal(t, recovery.Frame{Conversation: "conv", Turn: "turn", Seq: want[i].Seq, Payload: want[i].Data}, f)
	}

	for cursor, code := range map[uint64]refusal.Code{1: refusal.CodeStaleCursor, 7: refusal.CodeCursorAhead} {
		_, _, err := r.Resume(t.Context(), "alice", ref, cursor)
		we, ok := errors.AsType[*recovery.WindowError](err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, code, refusal.CodeOf(err))
		assert.Equal(t, recovery.Window{Lower: 2, Latest: 6}, we.Window)
		assert.Equal(t, cursor, we.Cursor)
	}

	_, err = r.Load(t.Context(), "alice", ref)
	assert.ErrorIs(t, err, refusal.ErrStoreUnavailable, "no store: turn operations are refused, replay works")
}
