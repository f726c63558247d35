package replay

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each reads a turn longer than one page whole, in seq order, from the
// cursor on, and stops at fn's error.
func TestEachReadsEveryPage(t *testing.T) {
	m := NewMemory(nil)
	key := Key{ConversationID: "c-1", TurnID: "t-1"}
	text := strings.Repeat("x", 60<<10) // 5 frames a page of DefaultPageBytes at most
	appendDeltas(t, m, key, 1, 12, text)

	var seqs []int64
	b, err := Each(t.Context(), m, key, 2, func(f Frame) error { seqs = append(seqs, f.Seq); return nil })
	require.NoError(t, err)
	assert.Equal(t, []int64{3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, seqs)
	assert.Equal(t, int64(12), b.Latest)

	stop := errors.New("enough")
	seqs = nil
	_, err = Each(t.Context(), m, key, 0, func(f Frame) error {
		seqs = append(seqs, f.Seq)
		if f.Seq == 7 {
			return stop
		}
		return nil
	})
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, []int64{1, 2, 3, 4, 5, 6, 7}, seqs)

	seqs = nil
	b, err = Each(t.Context(), m, Key{ConversationID: "c-1", TurnID: "none"}, 0, func(f Frame) error { seqs = append(seqs, f.Seq); return nil })
	require.NoError(t, err)
	assert.Empty(t, seqs)
	assert.Zero(t, b.Latest)
}
