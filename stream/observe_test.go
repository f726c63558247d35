package stream_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/observetest"
	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// get requests key's stream from srv after cursor ("" for none) as user,
// reads the whole response and returns its status.
func get(t *testing.T, url string, key replay.Key, cursor, user string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url+path(key), nil)
	require.NoError(t, err)
	if cursor != "" {
		req.Header.Set("Last-Event-ID", cursor)
	}
	if user != "" {
		req.Header.Set("X-User", user)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	require.NoError(t, err)
	return resp.StatusCode
}

// seen is what a test compares of a recorded event.
type seen struct {
	kind   observe.Kind
	phase  observe.Phase
	code   refusal.Code
	cursor int64
	count  int
	seq    int64
}

func seenOf(events []observetest.Recorded) []seen {
	var out []seen
	for _, e := range events {
		out = append(out, seen{e.Kind, e.Phase, e.Code, e.Cursor, e.Count, e.Seq})
	}
	return out
}

// Each request of an ended turn's stream is one connect and one end on its
// context: the window's read and the handler's write and delivery come in
// between, a reconnect reports where it resumed, and refusals end with
// their codes and bounds.
func TestObserverSeesStreams(t *testing.T) {
	obs := &observetest.Recorder{}
	w := replay.NewMemory(&replay.MemoryOptions{MaxFrames: 3, Observer: obs})
	appendAll(t, w, keyT1, script(keyT1, 3, 3)) // seqs 1 to 5; 3 to 5 retained
	srv := newServer(t, newHandler(t, w, &stream.HandlerOptions{Options: serve.Options{Observer: obs}}))
	for _, e := range obs.Events() {
		require.Failf(t, "an append reported", "%v", e)
	}

	require.Equal(t, http.StatusOK, get(t, srv.URL, keyT1, "3", ""))
	require.Equal(t, http.StatusNoContent, get(t, srv.URL, keyT1, "5", ""))
	require.Equal(t, http.StatusGone, get(t, srv.URL, keyT1, "1", ""))
	require.Equal(t, http.StatusNotFound, get(t, srv.URL, keyT1, "", "mallory"))
	require.Equal(t, http.StatusBadRequest, get(t, srv.URL, keyT1, "x", ""))

	events := obs.Events()
	for _, e := range events {
		assert.Equal(t, keyT1.ConversationID, e.Conversation)
		assert.Equal(t, keyT1.TurnID, e.Turn)
	}
	st, en := observe.Start, observe.End
	assert.Equal(t, []seen{
		{observe.StreamConnect, st, "", 0, 0, 0},
		{observe.ReplayServe, observe.Point, "", 3, 2, 0},
		{observe.StreamResume, observe.Point, "", 3, 0, 0},
		{observe.StreamWrite, st, "", 0, 2, 5},
		{observe.StreamDeliver, en, "", 0, 2, 5},
		{observe.StreamEnd, en, "", 0, 2, 5},

		{observe.StreamConnect, st, "", 0, 0, 0},
		{observe.ReplayServe, observe.Point, "", 5, 0, 0},
		{observe.StreamResume, observe.Point, "", 5, 0, 0},
		{observe.StreamEnd, en, "", 0, 0, 0},

		{observe.StreamConnect, st, "", 0, 0, 0},
		{observe.ReplayRefuse, observe.Point, refusal.CodeStaleCursor, 1, 0, 0},
		{observe.StreamRefuse, en, refusal.CodeStaleCursor, 1, 0, 0},

		{observe.StreamConnect, st, "", 0, 0, 0},
		{observe.StreamRefuse, en, refusal.CodeTurnNotFound, 0, 0, 0},

		{observe.StreamConnect, st, "", 0, 0, 0},
		{observe.StreamRefuse, en, refusal.CodeInvalidCursor, 0, 0, 0},
	}, seenOf(events))
	assert.Empty(t, obs.Faults())
	// Every moment of a request is on its connect's context.
	span := 0
	for _, e := range events {
		if e.Kind == observe.StreamConnect {
			span = e.Span
		}
		if e.Kind != observe.StreamWrite && e.Kind != observe.StreamDeliver { // a write has a context of its own
			assert.Equal(t, span, e.Span, "%s", e.Kind)
		}
	}
	stale := events[12]
	assert.Equal(t, [2]int64{2, 5}, [2]int64{stale.Lower, stale.Latest}, "the bounds of the refusal")
}

// A live stream, parked between frames (its connection taken over), keeps
// reporting on its connect's context: every delivery, then its end with the
// count of frames and the last seq.
func TestObserverFollowsAParkedStream(t *testing.T) {
	for _, waitOnRequest := range []bool{false, true} {
		obs := &observetest.Recorder{}
		w := newWindow()
		envs := script(keyT1, 4, 3) // seqs 1 to 6
		appendAll(t, w, keyT1, envs[:2])
		srv := newServer(t, newHandler(t, w, &stream.HandlerOptions{Options: serve.Options{Observer: obs, WaitOnRequest: waitOnRequest}}))
		done := make(chan int, 1)
		go func() { done <- get(t, srv.URL, keyT1, "", "") }()
		delivered := func(seq int64) func([]observetest.Recorded) bool {
			return func(events []observetest.Recorded) bool {
				n := len(events)
				return n > 0 && events[n-1].Kind == observe.StreamDeliver && events[n-1].Seq == seq
			}
		}
		require.NoError(t, obs.Await(t.Context(), delivered(2)))
		appendAll(t, w, keyT1, envs[2:4])
		require.NoError(t, obs.Await(t.Context(), delivered(4)))
		appendAll(t, w, keyT1, envs[4:])
		require.Equal(t, http.StatusOK, <-done)
		require.NoError(t, obs.Await(context.Background(), func(events []observetest.Recorded) bool {
			return len(observetest.Ends(events)) == 1
		}))

		events := obs.Events()
		last := events[len(events)-1]
		assert.Equal(t, seen{observe.StreamEnd, observe.End, "", 0, 6, 6}, seenOf(events[len(events)-1:])[0], "parked: %v", !waitOnRequest)
		assert.Equal(t, events[0].Span, last.Span, "the end is on the connect's context")
		total := 0
		for _, e := range events {
			if e.Kind == observe.StreamDeliver {
				total += e.Count
				assert.NoError(t, e.Err)
			}
		}
		assert.Equal(t, 6, total, "every frame delivered once")
		assert.Empty(t, obs.Faults())
	}
}

// nopObserver is the cheapest Observer there is.
type nopObserver struct{}

func (nopObserver) Observe(ctx context.Context, _ observe.Event) context.Context { return ctx }

// The handler's delivery allocates as much with a no-op observer as with
// none: serving an ended turn of 100 frames to a recorder.
func TestObserverAddsNoAllocation(t *testing.T) {
	allocs := func(obs observe.Observer) float64 {
		w := newWindow()
		appendAll(t, w, keyT1, script(keyT1, 98, 64))
		h := mux(newHandler(t, w, &stream.HandlerOptions{Options: serve.Options{Observer: obs}}))
		return testing.AllocsPerRun(20, func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", path(keyT1), nil))
			require.Equal(t, http.StatusOK, rec.Code)
		})
	}
	none, nop := allocs(nil), allocs(nopObserver{})
	t.Logf("allocations per delivery of 100 frames: %.0f without an observer, %.0f with a no-op one", none, nop)
	if raceEnabled {
		t.Skip("the race detector allocates on its own account: the counts are not the handler's")
	}
	assert.Equal(t, none, nop)
}
