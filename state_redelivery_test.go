package chatprotocol

import (
	"errors"
	"strconv"
	"testing"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An identical redelivery is a no-op within the turn's last
// RedeliveryWindow seqs and sequence-reordered below them, and what Apply
// keeps to tell them apart does not grow with the stream.
func TestApplyRedeliveryWindow(t *testing.T) {
	s := NewChatStateV1("c-1")
	last := int64(3*RedeliveryWindow + 7)
	envs := make([]ChatEventEnvelope, last)
	for i := range envs {
		envs[i] = env(int64(i+1), &DeltaEvent{Text: strconv.Itoa(i % 10)})
	}
	applyAll(t, s, envs...)
	turn, _ := s.Turn("t-1")
	assert.LessOrEqual(t, cap(turn.digests), RedeliveryWindow, "digests are kept for the window only")
	before := stateJSON(t, s)

	oldest := last - RedeliveryWindow + 1 // the oldest seq still in the window
	for _, seq := range []int64{last, last - 1, oldest + 1, oldest} {
		require.NoError(t, s.Apply(envs[seq-1]), "seq %d is in the window", seq)
	}
	for _, seq := range []int64{oldest - 1, oldest - 2, 1} {
		err := s.Apply(envs[seq-1])
		require.ErrorIs(t, err, refusal.ErrSequenceReordered, "seq %d is below the window", seq)
		rerr, ok := errors.AsType[*refusal.Error](err)
		require.True(t, ok)
		assert.Equal(t, "/seq", rerr.Path)
	}
	other := env(oldest, &DeltaEvent{Text: "not the same"})
	require.ErrorIs(t, s.Apply(other), refusal.ErrSequenceReordered, "another envelope at a seq in the window")
	assert.Equal(t, before, stateJSON(t, s))

	// A clone keeps the window and goes on independently.
	c := s.Clone()
	require.NoError(t, c.Apply(envs[oldest-1]))
	require.NoError(t, c.Apply(env(last+1, &DeltaEvent{Text: "x"})))
	require.ErrorIs(t, c.Apply(envs[oldest-1]), refusal.ErrSequenceReordered, "the window moved on in the clone")
	require.NoError(t, s.Apply(envs[oldest-1]), "and not in the original")
}
