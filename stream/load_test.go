package stream_test

import (
	"bytes"
	"context"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/observetest"
	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// openIdle opens a raw connection to addr, asks for key's stream and reads
// until the frame of seq latest has arrived whole: the handler then waits.
func openIdle(t testing.TB, addr string, key replay.Key, latest int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	_, err = io.WriteString(c, "GET "+path(key)+" HTTP/1.1\r\nHost: test\r\nAccept: text/event-stream\r\n\r\n")
	require.NoError(t, err)
	var seen []byte
	buf := make([]byte, 512)
	for !bytes.Contains(seen, []byte("id: "+strconv.Itoa(latest)+"\n")) || !bytes.HasSuffix(seen, []byte("\n\n\r\n")) {
		n, err := c.Read(buf)
		require.NoError(t, err)
		seen = append(seen, buf[:n]...)
	}
	require.True(t, bytes.HasPrefix(seen, []byte("HTTP/1.1 200 ")), string(seen))
	return c
}

// inUse is the memory the runtime holds for the heap and goroutine stacks
// after a collection.
func inUse() uint64 {
	runtime.GC()
	runtime.GC() // the second frees the stacks of goroutines the first found dead
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

// idleCost opens n connections to a live turn served with opts, each
// waiting once it has had the turn's three frames, and returns the heap
// and stack they hold, per connection: server side (goroutines, buffers,
// the handler's state) plus the test's raw client socket.
func idleCost(t *testing.T, n int, opts *stream.HandlerOptions) float64 {
	w := newWindow()
	appendAll(t, w, keyT1, script(keyT1, 3, 3)[:3])
	h := newHandler(t, w, opts)
	srv := httptest.NewServer(mux(h))
	openIdle(t, srv.Listener.Addr().String(), keyT1, 3).Close() // warm up
	before := inUse()
	conns := make([]net.Conn, n)
	for i := range conns {
		conns[i] = openIdle(t, srv.Listener.Addr().String(), keyT1, 3)
	}
	per := (float64(inUse()) - float64(before)) / float64(n)
	for _, c := range conns {
		c.Close()
	}
	h.Close()
	srv.Close() // waits for the handlers still running
	return per
}

// TestIdleSubscriberMemory measures what one idle subscriber costs over
// 1,000 connections, parked (the default) and, as the baseline, waiting
// on its request's goroutine (WaitOnRequest), and holds the parked one to
// 16 KiB.
func TestIdleSubscriberMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 1,000 connections")
	}
	const n = 1000
	parked := idleCost(t, n, &stream.HandlerOptions{Options: serve.Options{HeartbeatInterval: time.Hour}})
	onRequest := idleCost(t, n, &stream.HandlerOptions{Options: serve.Options{HeartbeatInterval: time.Hour, WaitOnRequest: true}})
	t.Logf("idle subscriber over %d connections: parked %.0f bytes (%.1f KiB), on its request goroutine %.0f bytes (%.1f KiB): %.1f%% of it",
		n, parked, parked/1024, onRequest, onRequest/1024, 100*parked/onRequest)
	if !raceEnabled {
		assert.LessOrEqual(t, parked, 16.0*1024, "at most 16 KiB per idle subscriber")
		assert.Less(t, parked, onRequest/4)
	}
}

// TestThousandClientsReconnectAtOnce cuts 1,000 followers of one live turn
// at the same frame, right after its id line; all reconnect at once and all
// end with the whole turn.
func TestThousandClientsReconnectAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 1,000 clients")
	}
	const n = 1000
	w := newWindow()
	envs := script(keyT1, 50, 20)
	appendAll(t, w, keyT1, envs[:2])
	q := &requests{h: newHandler(t, w, &stream.HandlerOptions{Options: serve.Options{Retry: 10 * time.Millisecond}})}
	url, p := serveThroughProxy(t, q, &cutproxy.Options{Plan: func(conn int, _ *rand.Rand) cutproxy.Cut {
		if conn < n { // each client's first connection: all are open before seq 3 is appended
			return cutproxy.Cut{IDLine: 3}
		}
		return cutproxy.Cut{}
	}})
	client := newClient(t)
	want := wantState(t, envs)

	var reached2, done sync.WaitGroup
	reached2.Add(n)
	done.Add(n)
	var failed atomic.Int32
	for range n {
		go func() {
			defer done.Done()
			once := sync.OnceFunc(reached2.Done)
			state, err := stream.Follow(context.Background(), url, &stream.FollowOptions{Client: client,
				OnEnvelope: func(env *chatprotocol.ChatEventEnvelope) error {
					if env.Seq == 2 {
						once()
					}
					return nil
				}})
			if err != nil || stateJSON(t, state) != want {
				failed.Add(1)
			}
		}()
	}
	reached2.Wait()
	base := inUse()
	appendAll(t, w, keyT1, envs[2:3]) // every connection is cut right after this frame's id line
	peak := base
	for _, env := range envs[3:] {
		appendAll(t, w, keyT1, []*chatprotocol.ChatEventEnvelope{env})
		peak = max(peak, inUse())
	}
	done.Wait()
	assert.Zero(t, failed.Load(), "every client ends with the whole turn")
	assert.Equal(t, n, p.Stats().Cuts)
	assert.Len(t, q.lastEventIDs(), 2*n, "one reconnect each")
	t.Logf("1,000 reconnecting followers: %.1f MiB in use with all waiting, peak %.1f MiB while they reconnect and finish (clients, proxy and server in one process)",
		float64(base)/(1<<20), float64(peak)/(1<<20))
	if !raceEnabled {
		assert.Less(t, peak, base+64<<20, "reconnecting at once costs no more than 64 MiB beyond the waiting state")
	}
}

// TestSlowReaderIsDropped serves a client that never reads beside one that
// does: the first is dropped once a write outlasts WriteTimeout, the
// second gets the whole turn meanwhile. Every wait has a deadline
// (slowReaderDeadline): on a loaded machine under -race the test fails
// rather than hangs.
func TestSlowReaderIsDropped(t *testing.T) {
	const slowReaderDeadline = 60 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), slowReaderDeadline)
	defer cancel()
	w := replay.NewMemory(&replay.MemoryOptions{MaxBytes: -1})
	big := script(keyT1, 200, 32<<10) // 6.4 MiB of deltas
	obs := &observetest.Recorder{}
	h := newHandler(t, w, &stream.HandlerOptions{Options: serve.Options{WriteTimeout: 300 * time.Millisecond, Observer: obs}})
	srv := httptest.NewUnstartedServer(mux(h))
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		c.(*net.TCPConn).SetWriteBuffer(8 << 10) // small kernel buffers, so the stall shows soon
		return ctx
	}
	srv.Start()
	defer srv.Close()
	defer h.Close() // before srv.Close: a stream still served then is aborted, not waited for
	appendAll(t, w, keyT1, big[:1])

	slow, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer slow.Close()
	slow.(*net.TCPConn).SetReadBuffer(4 << 10)
	_, err = io.WriteString(slow, "GET "+path(keyT1)+" HTTP/1.1\r\nHost: test\r\n\r\n")
	require.NoError(t, err)

	want := wantState(t, big)
	followed := make(chan error, 1)
	go func() {
		state, err := stream.Follow(ctx, srv.URL+path(keyT1), nil)
		if err == nil {
			var got []byte
			if got, err = state.MarshalJSON(); err == nil && string(got) != want {
				err = io.ErrUnexpectedEOF
			}
		}
		followed <- err
	}()
	appendAll(t, w, keyT1, big[1:])
	select {
	case err := <-followed:
		require.NoError(t, err, "the reading client is not held up")
	case <-ctx.Done():
		t.Fatalf("the reading client did not get the whole turn within %v", slowReaderDeadline)
	}

	// The slow client now reads what its socket holds, then finds the
	// connection closed, long before the 6.4 MiB of the turn.
	slow.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := io.Copy(io.Discard, slow)
	if err != nil {
		assert.ErrorIs(t, err, syscall.ECONNRESET, "closed, not timed out")
	}
	assert.Less(t, n, int64(1<<20), "dropped after %d bytes", n)

	// The slow stream's end is reported as a drop; the reading client's
	// stream ended normally (on a loaded machine it may have been dropped
	// too, at the same write timeout, and resumed: Follow got the whole
	// turn all the same).
	has := func(ends []observe.Kind, k observe.Kind) bool { return slices.Contains(ends, k) }
	require.NoError(t, obs.Await(ctx, func(events []observetest.Recorded) bool {
		ends := observetest.Ends(events)
		return has(ends, observe.StreamDrop) && has(ends, observe.StreamEnd)
	}), "both streams' ends are reported within %v; ends so far %v", slowReaderDeadline, observetest.Ends(obs.Events()))
	for _, k := range observetest.Ends(obs.Events()) {
		assert.Contains(t, []observe.Kind{observe.StreamDrop, observe.StreamEnd}, k)
	}
	assert.Empty(t, obs.Faults())
}

// TestShutdownEndsStreams shuts a server down while a stream is live: the
// handler registered with RegisterOnShutdown ends it, its Shutdown returns
// once the stream has ended, and the turn is untouched.
func TestShutdownAbortsStreams(t *testing.T) {
	w := newWindow()
	envs := script(keyT1, 3, 3)
	appendAll(t, w, keyT1, envs[:2])
	h := newHandler(t, w, nil)
	srv := &http.Server{Handler: mux(h)}
	srv.RegisterOnShutdown(h.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go srv.Serve(ln)

	c := openIdle(t, ln.Addr().String(), keyT1, 2) // live, waiting for seq 3
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, srv.Shutdown(ctx))
	require.NoError(t, h.Shutdown(ctx), "returns once the stream has ended")
	c.SetReadDeadline(time.Now().Add(time.Second)) // the end is there already: no wait
	rest, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.NotContains(t, string(rest), "0\r\n\r\n", "the response is aborted: no last chunk, so that the client resumes")

	rec := httptest.NewRecorder()
	mux(h).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path(keyT1), nil))
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "after Close")

	b, _, err := w.Read(context.Background(), keyT1, 0, math.MaxInt)
	require.NoError(t, err)
	assert.False(t, b.Ended, "a disconnect is not a cancellation")
	appendAll(t, w, keyT1, envs[2:]) // the turn goes on
}
