package turn_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// longText is n bytes and more of two-byte characters after one ASCII
// byte, so that a cut at an even byte count falls inside a character.
func longText(n int) string { return "x" + strings.Repeat("é\"", n/3+1) }

// A reason or an error message too long for the terminal frame is cut to
// MaxEndTextBytes, on a character boundary, and the turn ends: completed or
// failed, in the window and in recovery.
func TestLongEndTextsAreCut(t *testing.T) {
	ctx := t.Context()
	long := longText(2 << 20)
	for i, fail := range []bool{false, true} {
		h := newHost(t)
		id := "t-" + string(rune('1'+i))
		p := h.start(id)
		p.SetReason(long)
		var err error
		if fail {
			err = p.Fail(ctx, turn.Failure{Code: "provider-error", Message: long})
		} else {
			err = p.Complete(ctx)
		}
		require.NoError(t, err)
		envs := h.envelopes(id)
		end := envs[len(envs)-1].Event.(*chatprotocol.LifecycleEvent)
		texts := []string{end.Reason}
		want := chatprotocol.LifecycleCompleted
		if fail {
			want = chatprotocol.LifecycleFailed
			require.Equal(t, []string{"lifecycle", "error", "lifecycle"}, types(envs))
			texts = append(texts, envs[1].Event.(*chatprotocol.ErrorEvent).Message)
		}
		assert.Equal(t, want, end.Status)
		for _, s := range texts {
			assert.True(t, utf8.ValidString(s))
			assert.LessOrEqual(t, len(s), turn.MaxEndTextBytes)
			assert.Greater(t, len(s), turn.MaxEndTextBytes-utf8.UTFMax)
			assert.True(t, strings.HasPrefix(long, s))
		}
		b, err := h.window.Bounds(ctx, replay.Key{ConversationID: conversation, TurnID: id})
		require.NoError(t, err)
		assert.True(t, b.Ended, "the window ended")
		rec, err := h.rec.Load(ctx, worker, refOf(id))
		require.NoError(t, err)
		assert.Equal(t, string(want), string(rec.Status))
	}
}

// Under a frame limit smaller than the bound, the texts are cut further,
// to what the terminal frames hold.
func TestEndTextsFitASmallFrameLimit(t *testing.T) {
	ctx := t.Context()
	const limit = 600
	h := newHostOn(t, replay.NewMemory(&replay.MemoryOptions{MaxFrameBytes: limit}))
	opts := h.options()
	opts.MaxFrameBytes = limit
	p, err := turn.Start(ctx, h.window, key, opts)
	require.NoError(t, err)
	long := longText(turn.MaxEndTextBytes)
	p.SetReason(long)
	require.NoError(t, p.Fail(ctx, turn.Failure{Code: "provider-error", Message: long}))
	envs := h.envelopes("t-1")
	require.Equal(t, []string{"lifecycle", "error", "lifecycle"}, types(envs))
	for _, env := range envs[1:] {
		b, err := env.AppendJSON(nil)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(b), limit)
		assert.Greater(t, len(b), limit-8, "cut no more than it must")
	}
	msg := envs[1].Event.(*chatprotocol.ErrorEvent).Message
	assert.True(t, utf8.ValidString(msg))
	assert.True(t, strings.HasPrefix(long, msg))
	assert.Equal(t, chatprotocol.LifecycleFailed, envs[2].Event.(*chatprotocol.LifecycleEvent).Status)
}
