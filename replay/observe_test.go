package replay

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/observetest"
	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Memory reports each Read with the cursor, the bounds and the count of
// frames served, and a refused cursor with its code; appends and Waits
// report nothing.
func TestMemoryReportsReads(t *testing.T) {
	obs := &observetest.Recorder{}
	m := NewMemory(&MemoryOptions{MaxFrames: 3, Observer: obs})
	key := Key{ConversationID: "c", TurnID: "t"}
	appendDeltas(t, m, key, 1, 5, "x") // 3 to 5 retained
	_, err := m.Wait(t.Context(), key, 2)
	require.NoError(t, err)
	require.Empty(t, obs.Events())

	_, _, err = m.Read(t.Context(), key, 3, math.MaxInt)
	require.NoError(t, err)
	_, _, err = m.Read(t.Context(), key, 1, math.MaxInt)
	require.ErrorIs(t, err, refusal.ErrStaleCursor)
	_, _, err = m.Read(t.Context(), key, 7, math.MaxInt)
	require.ErrorIs(t, err, refusal.ErrCursorAhead)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err = m.Read(ctx, key, 3, math.MaxInt) // an ended ctx reads nothing: nothing to report
	require.ErrorIs(t, err, context.Canceled)

	var got []observe.Event
	for _, e := range obs.Events() {
		e.Err = nil
		got = append(got, e.Event)
	}
	at := func(kind observe.Kind, cursor int64, n int, code refusal.Code) observe.Event {
		return observe.Event{Kind: kind, Conversation: "c", Turn: "t", Cursor: cursor, Lower: 2, Latest: 5, Count: n, Code: code}
	}
	assert.Equal(t, []observe.Event{
		at(observe.ReplayServe, 3, 2, ""),
		at(observe.ReplayRefuse, 1, 0, refusal.CodeStaleCursor),
		at(observe.ReplayRefuse, 7, 0, refusal.CodeCursorAhead),
	}, got)
}

// A silent Memory's Read allocates only its suffix, as with a no-op
// observer.
func TestMemoryObserverAddsNoAllocation(t *testing.T) {
	key := Key{ConversationID: "c", TurnID: "t"}
	allocs := func(obs observe.Observer) float64 {
		m := NewMemory(&MemoryOptions{Observer: obs})
		appendDeltas(t, m, key, 1, 5, "x")
		return testing.AllocsPerRun(100, func() { _, _, _ = m.Read(context.Background(), key, 2, math.MaxInt) })
	}
	assert.Equal(t, allocs(nil), allocs(nopObserver{}))
}

type nopObserver struct{}

func (nopObserver) Observe(ctx context.Context, _ observe.Event) context.Context { return ctx }
