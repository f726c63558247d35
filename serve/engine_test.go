package serve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// counting is a Codec that writes each frame's seq and the count of frames
// before it, and counts its calls in calls.
type counting struct {
	calls *atomic.Int64
	n     int
	done  bool
}

func (c *counting) Maps(string) bool { return true }

func (c *counting) Append(dst []byte, f replay.Frame, _ chatprotocol.ChatEventEnvelope) ([]byte, error) {
	c.calls.Add(1)
	dst = fmt.Appendf(dst, "data: %d/%d\n\n", f.Seq, c.n)
	c.n++
	c.done = c.done || strings.Contains(string(f.Data), `"status":"completed"`)
	return dst, nil
}

func (c *counting) Done() bool { return c.done }

// serveTurn serves key's turn through e on a loopback server.
func serveTurn(t *testing.T, e *serve.Engine, key replay.Key, calls *atomic.Int64) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.Serve(w, r, &serve.Stream{Key: key, NewCodec: func() serve.Codec { return &counting{calls: calls} },
			Prologue: []byte("data: start\n\n"), Epilogue: []byte("data: end\n\n")})
	}))
	t.Cleanup(srv.Close)
	shutdownFirst(t, e)
	return srv
}

// shutdownFirst shuts e down when t ends, before the servers started
// earlier close: a stream that ended has then given its connection back.
func shutdownFirst(t *testing.T, e *serve.Engine) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		assert.NoError(t, e.Shutdown(ctx))
	})
}

// want is what a stream of n frames reads whole.
func want(n int) string {
	var b strings.Builder
	b.WriteString("data: start\n\n")
	for i := range n {
		fmt.Fprintf(&b, "data: %d/%d\n\n", i+1, i)
	}
	b.WriteString("data: end\n\n")
	return b.String()
}

// engine returns an Engine of w configured by opts.
func engine(t *testing.T, w replay.Window, opts *serve.Options) *serve.Engine {
	t.Helper()
	e, err := serve.NewEngine(w, opts)
	require.NoError(t, err)
	t.Cleanup(e.Close)
	return e
}

func TestEveryFrameIsTranscodedOnceForAllStreams(t *testing.T) {
	w := replay.NewMemory(nil)
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	envs := turnscript.Envelopes(key, turnscript.Events(key, true))
	var calls atomic.Int64
	srv := serveTurn(t, engine(t, w, nil), key, &calls)
	const streams = 50
	var wg, connected sync.WaitGroup
	bodies := make([]string, streams)
	for i := range streams {
		if i == streams/2 { // half join before the first frame, half midway
			connected.Wait()
			for _, env := range envs[:len(envs)/2] {
				_, err := w.Append(context.Background(), key, env)
				require.NoError(t, err)
			}
		}
		connected.Add(1)
		wg.Go(func() {
			resp, err := http.Get(srv.URL)
			connected.Done() // the stream holds the turn's entry before its headers
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			bodies[i] = string(b)
		})
	}
	connected.Wait() // every stream shares the entry before the turn ends
	for _, env := range envs[len(envs)/2:] {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
	wg.Wait()
	for _, b := range bodies {
		assert.Equal(t, want(len(envs)), b)
	}
	assert.Equal(t, int64(len(envs)), calls.Load(), "each frame transcoded once for %d streams", streams)
}

func TestAStreamBehindTheCacheRebuildsItsOwnCodec(t *testing.T) {
	w := replay.NewMemory(nil)
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	var envs []*chatprotocol.ChatEventEnvelope
	for i := range 40 {
		envs = append(envs, turnscript.Envelope(key, int64(i+1), &chatprotocol.DeltaEvent{Text: strconv.Itoa(i)}))
	}
	envs = append(envs, turnscript.Envelope(key, 41, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}))
	for _, env := range envs {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
	var calls atomic.Int64
	s := engine(t, w, &serve.Options{CacheBytes: 40, PageBytes: 64})
	srv := serveTurn(t, s, key, &calls)
	for range 3 { // each stream after the first finds the cache past its frames
		resp, err := http.Get(srv.URL)
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, want(len(envs)), string(b))
	}
	assert.Greater(t, calls.Load(), int64(len(envs)), "the later streams rebuilt their codecs")
}

func TestIdleStreamsShareAWaitAndGetHeartbeatComments(t *testing.T) {
	w := replay.NewMemory(nil)
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	envs := turnscript.Envelopes(key, turnscript.Events(key, false))
	_, err := w.Append(context.Background(), key, envs[0])
	require.NoError(t, err)
	var calls atomic.Int64
	s := engine(t, w, &serve.Options{HeartbeatInterval: 20 * time.Millisecond})
	srv := serveTurn(t, s, key, &calls)

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	leaver, err := http.DefaultClient.Do(req) // leaves while the turn is idle
	require.NoError(t, err)
	stayer, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer stayer.Body.Close()
	time.Sleep(120 * time.Millisecond)
	cancel()
	leaver.Body.Close()
	for _, env := range envs[1:] {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
	b, err := io.ReadAll(stayer.Body)
	require.NoError(t, err)
	body := string(b)
	assert.GreaterOrEqual(t, strings.Count(body, ": heartbeat\n\n"), 2, "heartbeats while idle")
	assert.Equal(t, want(len(envs)), strings.ReplaceAll(body, ": heartbeat\n\n", ""))
	require.NoError(t, s.Shutdown(context.Background()))
}

func TestCloseAbortsAStreamItEndsBeforeItsTurn(t *testing.T) {
	w := replay.NewMemory(nil)
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	envs := turnscript.Envelopes(key, turnscript.Events(key, false))
	_, err := w.Append(context.Background(), key, envs[0])
	require.NoError(t, err)
	var calls atomic.Int64
	s := engine(t, w, nil)
	srv := serveTurn(t, s, key, &calls)
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	time.Sleep(50 * time.Millisecond)
	s.Close()
	b, err := io.ReadAll(resp.Body)
	require.Error(t, err, "a clean end of body after %q", b)
	assert.Equal(t, "data: start\n\ndata: 1/0\n\n", string(b))
	require.NoError(t, s.Shutdown(context.Background()))
	again, err := http.Get(srv.URL)
	require.NoError(t, err)
	again.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, again.StatusCode)
	assert.Equal(t, "2", again.Header.Get("Retry-After"))
}

// typed is a Codec that maps every type but "state", writing each frame's
// seq and type, done at a lifecycle event (with terminalOnly, one that is
// not started).
type typed struct{ done, terminalOnly bool }

func (c *typed) Maps(typ string) bool { return typ != "state" }
func (c *typed) Done() bool           { return c.done }

func (c *typed) Append(dst []byte, f replay.Frame, env chatprotocol.ChatEventEnvelope) ([]byte, error) {
	l, ok := env.Event.(*chatprotocol.LifecycleEvent)
	c.done = ok && (!c.terminalOnly || l.Status != chatprotocol.LifecycleStarted)
	return fmt.Appendf(dst, "data: %d %s\n\n", f.Seq, env.Event.EventType()), nil
}

// TestTheCodecGetsOnlyWhatItMaps: a frame of a type the Codec does not map
// and an empty delta reach no Codec; the others come with their envelope.
func TestTheCodecGetsOnlyWhatItMaps(t *testing.T) {
	w := replay.NewMemory(nil)
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	for i, ev := range []chatprotocol.Event{
		&chatprotocol.DeltaEvent{Text: "a"},
		&chatprotocol.StateEvent{Snapshot: json.RawMessage(`{}`)},
		&chatprotocol.DeltaEvent{Text: ""},
		&chatprotocol.DeltaEvent{Text: "b"},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted},
	} {
		_, err := w.Append(context.Background(), key, turnscript.Envelope(key, int64(i+1), ev))
		require.NoError(t, err)
	}
	e := engine(t, w, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		e.Serve(rw, r, &serve.Stream{Key: key, NewCodec: func() serve.Codec { return &typed{} }})
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "data: 1 delta\n\ndata: 4 delta\n\ndata: 5 lifecycle\n\n", string(b))
}

// TestATurnWithoutItsFirstFrameIsNotAnOutage: a turn whose first frames
// the window pruned is 410 stale-cursor with the bounds, and an ended turn
// the window evicted is 204 to a resume and 410 otherwise
// (docs/contract.md section 18.3), never 503 store-unavailable: the
// window's stale-cursor refusal of Read(0) carries the bounds.
func TestATurnWithoutItsFirstFrameIsNotAnOutage(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	w := replay.NewMemory(&replay.MemoryOptions{MaxFrames: 5, EndedTTL: time.Minute, Now: func() time.Time { return now }})
	pruned := replay.Key{ConversationID: "c", TurnID: "pruned"}
	evicted := replay.Key{ConversationID: "c", TurnID: "evicted"}
	for _, key := range []replay.Key{pruned, evicted} {
		evs := []chatprotocol.Event{&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}}
		for i := range 20 {
			evs = append(evs, &chatprotocol.DeltaEvent{Text: strconv.Itoa(i)})
		}
		if key == evicted {
			evs = append(evs[:3], &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted})
		}
		for _, env := range turnscript.Envelopes(key, evs) {
			_, err := w.Append(context.Background(), key, env)
			require.NoError(t, err)
		}
	}
	now = now.Add(2 * time.Minute) // past the ended turn's EndedTTL
	s := engine(t, w, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		key := replay.Key{ConversationID: "c", TurnID: r.URL.Query().Get("turn")}
		s.Serve(rw, r, &serve.Stream{Key: key, NewCodec: func() serve.Codec { return &typed{} }, Resume: r.URL.Query().Has("resume")})
	}))
	defer srv.Close()
	for _, c := range []struct {
		query         string
		status        int
		lower, latest int64
	}{
		{"turn=pruned", http.StatusGone, 16, 21},
		{"turn=pruned&resume", http.StatusGone, 16, 21},
		{"turn=evicted", http.StatusGone, 4, 4},
		{"turn=evicted&resume", http.StatusNoContent, 0, 0},
	} {
		resp, err := http.Get(srv.URL + "?" + c.query)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		assert.Equal(t, c.status, resp.StatusCode, "%s: %s", c.query, body)
		assert.Empty(t, resp.Header.Get("Retry-After"), c.query)
		if c.status == http.StatusNoContent {
			assert.Empty(t, body, c.query)
			continue
		}
		var got struct {
			Code          string
			Lower, Latest *int64
		}
		require.NoError(t, json.Unmarshal(body, &got), c.query)
		assert.Equal(t, "stale-cursor", got.Code, c.query)
		if assert.NotNil(t, got.Lower, c.query) && assert.NotNil(t, got.Latest, c.query) {
			assert.Equal(t, []int64{c.lower, c.latest}, []int64{*got.Lower, *got.Latest}, c.query)
		}
	}
}

// TestAReusedKeyNeverServesTheEarlierTurn: while a stream of a turn holds
// the turn's shared output, the window forgets the turn and a new one
// takes its key; a stream of the new turn gets the new turn's output,
// never the earlier turn's (docs/contract.md section 14.2).
func TestAReusedKeyNeverServesTheEarlierTurn(t *testing.T) {
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	fill := func(evs ...chatprotocol.Event) *replay.Memory {
		m := replay.NewMemory(nil)
		for i, ev := range evs {
			_, err := m.Append(context.Background(), key, turnscript.Envelope(key, int64(i+1), ev))
			require.NoError(t, err)
		}
		return m
	}
	earlier := fill(&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted, Reason: "earlier"},
		&chatprotocol.DeltaEvent{Text: "a"}, &chatprotocol.DeltaEvent{Text: "b"})
	later := fill(&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted, Reason: "later"},
		&chatprotocol.StateEvent{Snapshot: json.RawMessage(`{}`)}, &chatprotocol.SessionEvent{SessionID: "s"},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted})
	w := &swapped{m: earlier}
	e := engine(t, w, &serve.Options{HeartbeatInterval: time.Hour})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		e.Serve(rw, r, &serve.Stream{Key: key, NewCodec: func() serve.Codec { return &typed{terminalOnly: true} }})
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	first, err := http.DefaultClient.Do(req) // holds the earlier turn's output, parked after frame 3
	require.NoError(t, err)
	defer first.Body.Close()
	got := make([]byte, len("data: 1 lifecycle\n\ndata: 2 delta\n\ndata: 3 delta\n\n"))
	_, err = io.ReadFull(first.Body, got)
	require.NoError(t, err)
	assert.Equal(t, "data: 1 lifecycle\n\ndata: 2 delta\n\ndata: 3 delta\n\n", string(got))

	w.set(later)
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "data: 1 lifecycle\n\ndata: 3 session\n\ndata: 4 lifecycle\n\n", string(b))
}

// TestIdleCodecStreamsHaveNoGoroutine: caught-up streams through a Codec
// park as the version-1 stream's do: no goroutine of their own, one window
// wait for the turn.
func TestIdleCodecStreamsHaveNoGoroutine(t *testing.T) {
	w := replay.NewMemory(nil)
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	envs := turnscript.Envelopes(key, turnscript.Events(key, false))
	_, err := w.Append(context.Background(), key, envs[0])
	require.NoError(t, err)
	var calls atomic.Int64
	e := engine(t, w, &serve.Options{HeartbeatInterval: time.Hour})
	srv := serveTurn(t, e, key, &calls)
	before := runtime.NumGoroutine()
	const streams = 40
	bodies := make([]io.ReadCloser, streams)
	for i := range bodies {
		resp, err := http.Get(srv.URL)
		require.NoError(t, err)
		bodies[i] = resp.Body
		first := make([]byte, len("data: start\n\ndata: 1/0\n\n"))
		_, err = io.ReadFull(resp.Body, first)
		require.NoError(t, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine()-before > 2*streams+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	// Each connection keeps its client's two goroutines (reading and
	// writing); a parked stream adds none on the server, and the turn's
	// wait is one.
	assert.LessOrEqual(t, runtime.NumGoroutine()-before, 2*streams+2, "goroutines for %d idle streams", streams)
	for _, env := range envs[1:] {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
	for _, b := range bodies {
		got, err := io.ReadAll(b)
		require.NoError(t, err)
		assert.Equal(t, want(len(envs))[len("data: start\n\ndata: 1/0\n\n"):], string(got))
		b.Close()
	}
	assert.Equal(t, int64(len(envs)), calls.Load(), "each frame transcoded once for %d streams", streams)
}
