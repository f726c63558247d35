package serve

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// ends is a Codec that writes each frame's seq, done at the turn's end.
type ends struct{ done bool }

func (c *ends) Maps(string) bool { return true }
func (c *ends) Done() bool       { return c.done }

func (c *ends) Append(dst []byte, f replay.Frame, env chatprotocol.ChatEventEnvelope) ([]byte, error) {
	if l, ok := env.Event.(*chatprotocol.LifecycleEvent); ok && l.Status != chatprotocol.LifecycleStarted {
		c.done = true
	}
	return append(dst, "data: x\n\n"...), nil
}

// faulty is a window that fails its Waits or its Reads once told to.
type faulty struct {
	*replay.Memory
	waits, reads atomic.Bool
}

var errWindow = errors.New("the window is down")

func (f *faulty) Wait(ctx context.Context, key replay.Key, after int64) (replay.Bounds, error) {
	if f.waits.Load() {
		return replay.Bounds{}, errWindow
	}
	return f.Memory.Wait(ctx, key, after)
}

func (f *faulty) Read(ctx context.Context, key replay.Key, after int64, limit int) (replay.Bounds, []replay.Frame, error) {
	if f.reads.Load() {
		return replay.Bounds{}, nil, errWindow
	}
	return f.Memory.Read(ctx, key, after, limit)
}

// settled waits until e holds no stream, no hub and no cache entry.
func settled(t *testing.T, e *Engine) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.mu.Lock()
		streams := e.streams
		e.mu.Unlock()
		e.hubMu.Lock()
		hubs := len(e.hubs)
		e.hubMu.Unlock()
		e.cache.mu.Lock()
		entries := len(e.cache.m)
		e.cache.mu.Unlock()
		if streams == 0 && hubs == 0 && entries == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d streams, %d hubs, %d cache entries left", streams, hubs, entries)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestEveryWayAParkedStreamEndsFreesItsTurn: however parked streams end
// (the Engine's Close, their clients leaving, the window's Wait or Read
// failing, the turn's end), the Engine keeps no stream, hub, cache entry
// or goroutine of theirs.
func TestEveryWayAParkedStreamEndsFreesItsTurn(t *testing.T) {
	for _, c := range []struct {
		name  string
		end   func(t *testing.T, e *Engine, w *faulty, key replay.Key, cancel context.CancelFunc)
		clean bool
	}{
		{"Close", func(t *testing.T, e *Engine, _ *faulty, _ replay.Key, _ context.CancelFunc) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			require.NoError(t, e.Shutdown(ctx))
		}, false},
		{"clients leave", func(_ *testing.T, _ *Engine, _ *faulty, _ replay.Key, cancel context.CancelFunc) { cancel() }, false},
		{"Wait fails", func(_ *testing.T, _ *Engine, w *faulty, _ replay.Key, _ context.CancelFunc) { w.waits.Store(true) }, false},
		{"Read fails", func(t *testing.T, _ *Engine, w *faulty, key replay.Key, _ context.CancelFunc) {
			w.reads.Store(true)
			_, err := w.Append(context.Background(), key, turnscript.Envelope(key, 2, &chatprotocol.DeltaEvent{Text: "x"}))
			require.NoError(t, err)
		}, false},
		{"the turn ends", func(t *testing.T, _ *Engine, w *faulty, key replay.Key, _ context.CancelFunc) {
			_, err := w.Append(context.Background(), key, turnscript.Envelope(key, 2, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}))
			require.NoError(t, err)
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := goleak.IgnoreCurrent()
			key := replay.Key{ConversationID: "c", TurnID: "t"}
			w := &faulty{Memory: replay.NewMemory(nil)}
			_, err := w.Append(context.Background(), key, turnscript.Envelope(key, 1, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}))
			require.NoError(t, err)
			e, err := NewEngine(w, &Options{HeartbeatInterval: 10 * time.Millisecond})
			require.NoError(t, err)
			srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				st := &Stream{Key: key}
				if r.URL.Query().Has("codec") {
					st.NewCodec = func() Codec { return &ends{} }
				}
				e.Serve(rw, r, st)
			}))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var bodies []io.ReadCloser
			for _, q := range []string{"", "?codec", "?codec"} {
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+q, nil)
				require.NoError(t, err)
				resp, err := srv.Client().Do(req)
				require.NoError(t, err)
				bodies = append(bodies, resp.Body)
			}
			time.Sleep(30 * time.Millisecond) // caught up: parked
			c.end(t, e, w, key, cancel)
			for _, b := range bodies {
				_, err := io.ReadAll(b)
				b.Close()
				if c.clean {
					assert.NoError(t, err)
				} else {
					assert.Error(t, err, "an end that is not the turn's is never clean")
				}
			}
			settled(t, e)
			ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel2()
			require.NoError(t, e.Shutdown(ctx2))
			srv.Close()
			goleak.VerifyNone(t, before)
		})
	}
}

// big is a Codec that writes each delta's text whole, done at the turn's
// end.
type big struct{ done bool }

func (c *big) Maps(string) bool { return true }
func (c *big) Done() bool       { return c.done }

func (c *big) Append(dst []byte, _ replay.Frame, env chatprotocol.ChatEventEnvelope) ([]byte, error) {
	switch ev := env.Event.(type) {
	case *chatprotocol.DeltaEvent:
		dst = append(append(append(dst, "data: "...), ev.Text...), "\n\n"...)
	case *chatprotocol.LifecycleEvent:
		c.done = ev.Status == chatprotocol.LifecycleCompleted
	}
	return dst, nil
}

// TestAFrameOverTheCacheBoundReachesEveryParkedStream: a frame of about
// 1 MB, over the bound of the kept output, and the frames after it are
// transcoded once for every parked stream of the turn, however far one
// stream got ahead of the others, and nothing is kept once they ended.
func TestAFrameOverTheCacheBoundReachesEveryParkedStream(t *testing.T) {
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	w := replay.NewMemory(&replay.MemoryOptions{MaxFrameBytes: 2 << 20})
	_, err := w.Append(context.Background(), key, turnscript.Envelope(key, 1, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}))
	require.NoError(t, err)
	e, err := NewEngine(w, nil)
	require.NoError(t, err)
	var transcoded atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		e.Serve(rw, r, &Stream{Key: key, NewCodec: func() Codec { transcoded.Add(1); return &big{} }})
	}))
	defer srv.Close()
	const streams = 10
	var bodies []io.ReadCloser
	for range streams {
		resp, err := srv.Client().Get(srv.URL)
		require.NoError(t, err)
		bodies = append(bodies, resp.Body)
	}
	time.Sleep(30 * time.Millisecond) // caught up: parked
	text := make([]byte, 1<<20-1<<10) // a frame of about 1 MB, within the envelope limit
	for i := range text {
		text[i] = 'a' + byte(i%26)
	}
	for i, ev := range []chatprotocol.Event{&chatprotocol.DeltaEvent{Text: string(text)}, &chatprotocol.DeltaEvent{Text: "end"},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}} {
		_, err := w.Append(context.Background(), key, turnscript.Envelope(key, int64(i+2), ev))
		require.NoError(t, err)
	}
	for _, b := range bodies {
		got, err := io.ReadAll(b)
		b.Close()
		require.NoError(t, err)
		assert.Equal(t, "data: "+string(text)+"\n\ndata: end\n\n", string(got))
	}
	settled(t, e)
	assert.Equal(t, int64(1), transcoded.Load(), "one Codec for every stream")
	e.Close()
}
