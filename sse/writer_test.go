package sse_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// lockedRecorder is an httptest.ResponseRecorder that the test can read
// while a Writer's goroutine writes to it. It fails its writes or flushes
// after failAfter successful ones when failAfter > 0.
type lockedRecorder struct {
	mu        sync.Mutex
	rec       *httptest.ResponseRecorder
	flushes   int
	failAfter int
	writes    int
	flushErr  error
}

var errWire = errors.New("client went away")

func newLockedRecorder() *lockedRecorder {
	return &lockedRecorder{rec: httptest.NewRecorder()}
}

func (l *lockedRecorder) Header() http.Header { return l.rec.Header() }

func (l *lockedRecorder) WriteHeader(code int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rec.WriteHeader(code)
}

func (l *lockedRecorder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failAfter > 0 && l.writes >= l.failAfter {
		return 0, errWire
	}
	l.writes++
	return l.rec.Write(p)
}

func (l *lockedRecorder) FlushError() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.flushErr != nil && l.flushes > 0 {
		return l.flushErr
	}
	l.flushes++
	return nil
}

func (l *lockedRecorder) body() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.rec.Body.String()
}

func (l *lockedRecorder) flushCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.flushes
}

func TestWriterHeadersFramesAndFlushes(t *testing.T) {
	rec := newLockedRecorder()
	rec.Header().Set("Content-Length", "12")
	rec.Header().Set("X-Host", "kept")
	w, err := sse.NewWriter(t.Context(), rec, nil)
	require.NoError(t, err)

	assert.Equal(t, http.StatusOK, rec.rec.Code)
	h := rec.rec.Header()
	assert.Equal(t, "text/event-stream", h.Get("Content-Type"))
	assert.True(t, sse.IsEventStream(h.Get("Content-Type")))
	assert.Equal(t, "no-cache", h.Get("Cache-Control"))
	assert.Equal(t, "no", h.Get("X-Accel-Buffering"))
	assert.Empty(t, h.Get("Content-Length"))
	assert.Equal(t, "kept", h.Get("X-Host"))
	assert.Equal(t, 1, rec.flushCount(), "the headers are flushed at once")

	require.NoError(t, w.Comment("connected"))
	require.NoError(t, w.Send(sse.Frame{ID: "1", Event: "delta", Data: []byte(`{"text":"hi"}`)}))
	require.NoError(t, w.Heartbeat(time.UnixMilli(1764500000000)))
	assert.Equal(t, 4, rec.flushCount(), "one flush per frame")
	assert.Equal(t, ": connected\n\nevent: delta\ndata: {\"text\":\"hi\"}\nid: 1\n\n"+
		"event: heartbeat\ndata: {\"tsMs\":1764500000000}\n\n", rec.body())

	require.ErrorIs(t, w.Send(sse.Frame{ID: "2\n"}), refusal.ErrInvalidFrame)
	require.NoError(t, w.Err(), "a refused frame does not stop the Writer")
	require.NoError(t, w.Send(sse.Frame{ID: "2", Data: []byte("x")}))

	require.NoError(t, w.Close())
	require.NoError(t, w.Close())
	require.ErrorIs(t, w.Send(sse.Frame{Data: []byte("late")}), sse.ErrClosed)
	require.ErrorIs(t, w.Err(), sse.ErrClosed)
	assert.NotContains(t, rec.body(), "late")
}

// noFlush is a ResponseWriter that cannot flush.
type noFlush struct{ http.ResponseWriter }

func TestNewWriterNeedsAFlusher(t *testing.T) {
	_, err := sse.NewWriter(t.Context(), noFlush{httptest.NewRecorder()}, nil)
	require.ErrorIs(t, err, http.ErrNotSupported)
}

func TestWriterReportsWriteAndFlushErrors(t *testing.T) {
	t.Run("write", func(t *testing.T) {
		rec := newLockedRecorder()
		rec.failAfter = 1
		w, err := sse.NewWriter(t.Context(), rec, nil)
		require.NoError(t, err)
		require.NoError(t, w.Send(sse.Frame{Data: []byte("one")}))
		err = w.Send(sse.Frame{Data: []byte("two")})
		require.ErrorIs(t, err, errWire)
		require.ErrorIs(t, w.Comment("three"), errWire, "the Writer stays stopped")
		require.ErrorIs(t, w.Err(), errWire)
		require.ErrorIs(t, w.Close(), errWire)
	})
	t.Run("flush", func(t *testing.T) {
		rec := newLockedRecorder()
		rec.flushErr = errWire
		w, err := sse.NewWriter(t.Context(), rec, nil)
		require.NoError(t, err)
		require.ErrorIs(t, w.Send(sse.Frame{Data: []byte("one")}), errWire)
		require.ErrorIs(t, w.Close(), errWire)
	})
}

func TestWriterHeartbeats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		rec := newLockedRecorder()
		w, err := sse.NewWriter(ctx, rec, &sse.WriterOptions{HeartbeatInterval: 15 * time.Second})
		require.NoError(t, err)
		start := time.Now()

		time.Sleep(14 * time.Second)
		synctest.Wait()
		assert.Empty(t, rec.body(), "no heartbeat before the interval")

		require.NoError(t, w.Send(sse.Frame{ID: "1", Data: []byte("x")}))
		time.Sleep(31 * time.Second) // t = 45 s
		synctest.Wait()
		want := "data: x\nid: 1\n\n"
		for i := 1; i <= 3; i++ {
			ts := start.Add(time.Duration(i) * 15 * time.Second).UnixMilli()
			want += "event: heartbeat\ndata: {\"tsMs\":" + strconv.FormatInt(ts, 10) + "}\n\n"
		}
		assert.Equal(t, want, rec.body())

		cancel()
		synctest.Wait()
		require.ErrorIs(t, w.Send(sse.Frame{Data: []byte("late")}), context.Canceled)
		require.ErrorIs(t, w.Err(), context.Canceled)
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, want, rec.body(), "nothing is written once the request's context ended")
		require.NoError(t, w.Close(), "the context's end is not an error of Close")
	})
}

func TestWriterHeartbeatsStopOnCloseAndOnWriteErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newLockedRecorder()
		w, err := sse.NewWriter(t.Context(), rec, &sse.WriterOptions{HeartbeatInterval: time.Second})
		require.NoError(t, err)
		time.Sleep(2500 * time.Millisecond)
		require.NoError(t, w.Close())
		body := rec.body()
		assert.Equal(t, 2, strings.Count(body, "event: heartbeat"))
		time.Sleep(10 * time.Second)
		assert.Equal(t, body, rec.body())
	})
	synctest.Test(t, func(t *testing.T) {
		rec := newLockedRecorder()
		rec.failAfter = 2
		w, err := sse.NewWriter(t.Context(), rec, &sse.WriterOptions{HeartbeatInterval: time.Second})
		require.NoError(t, err)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.Equal(t, 2, strings.Count(rec.body(), "event: heartbeat"))
		require.ErrorIs(t, w.Err(), errWire)
		require.ErrorIs(t, w.Send(sse.Frame{Data: []byte("x")}), errWire)
		require.ErrorIs(t, w.Close(), errWire)
	})
}

func TestWriterFramesAreNeverInterleaved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := newLockedRecorder()
		w, err := sse.NewWriter(t.Context(), rec, &sse.WriterOptions{HeartbeatInterval: time.Millisecond})
		require.NoError(t, err)
		payload := strings.Repeat("p", 3000)
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Go(func() {
				for i := range 50 {
					id := strconv.Itoa(g*1000 + i)
					assert.NoError(t, w.Send(sse.Frame{ID: id, Data: []byte(id + "\n" + payload)}))
					time.Sleep(time.Millisecond)
				}
			})
		}
		wg.Wait()
		require.NoError(t, w.Close())

		evs, _, err := decodeAll(strings.NewReader(rec.body()), nil)
		require.NoError(t, err)
		seen := map[string]bool{}
		heartbeats := 0
		for _, ev := range evs {
			if ev.Type == sse.EventHeartbeat {
				heartbeats++
				continue
			}
			id, rest, ok := strings.Cut(string(ev.Data), "\n")
			require.True(t, ok)
			assert.Equal(t, payload, rest)
			assert.Equal(t, id, ev.LastEventID)
			seen[id] = true
		}
		assert.Len(t, seen, 400)
		assert.Positive(t, heartbeats)
	})
}

// TestWriterOverHTTP serves a stream through a real server and reads it
// with the Decoder; when the client goes away, the handler's Writer stops.
func TestWriterOverHTTP(t *testing.T) {
	stopped := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w, err := sse.NewWriter(r.Context(), rw, nil)
		if !assert.NoError(t, err) {
			return
		}
		defer w.Close()
		for i := 1; i <= 3; i++ {
			if !assert.NoError(t, w.Send(sse.Frame{ID: strconv.Itoa(i), Event: "delta", Data: []byte("part " + strconv.Itoa(i))})) {
				return
			}
		}
		<-r.Context().Done()
		stopped <- w.Send(sse.Frame{ID: "4", Data: []byte("after")})
	}))
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	require.True(t, sse.IsEventStream(resp.Header.Get("Content-Type")))
	d := sse.NewDecoder(resp.Body, nil)
	for i := 1; i <= 3; i++ {
		ev, err := d.Next()
		require.NoError(t, err)
		assert.Equal(t, "delta", ev.Type)
		assert.Equal(t, "part "+strconv.Itoa(i), string(ev.Data))
		assert.Equal(t, strconv.Itoa(i), ev.LastEventID)
	}
	require.NoError(t, resp.Body.Close())
	require.ErrorIs(t, <-stopped, context.Canceled)
}
