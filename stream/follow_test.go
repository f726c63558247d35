package stream_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// requests counts the requests h serves and keeps their Last-Event-ID.
type requests struct {
	h    http.Handler
	mu   sync.Mutex
	last []string
	// fail answers the first fail requests 503 without calling h.
	fail int
}

func (q *requests) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q.mu.Lock()
	q.last = append(q.last, r.Header.Get("Last-Event-ID"))
	failing := len(q.last) <= q.fail
	q.mu.Unlock()
	if failing {
		http.Error(w, "busy", http.StatusServiceUnavailable)
		return
	}
	q.h.ServeHTTP(w, r)
}

func (q *requests) lastEventIDs() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.last...)
}

// sleeps records the delays Follow asks for, without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// seqRecorder keeps the seqs OnEnvelope sees.
type seqRecorder struct {
	mu   sync.Mutex
	seqs []int64
}

func (r *seqRecorder) on(env *chatprotocol.ChatEventEnvelope) error {
	r.mu.Lock()
	r.seqs = append(r.seqs, env.Seq)
	r.mu.Unlock()
	return nil
}

func seqsUpTo(n int) []int64 {
	s := make([]int64, n)
	for i := range s {
		s[i] = int64(i + 1)
	}
	return s
}

// serveThroughProxy serves h behind a cutting proxy and returns the URL of
// key's stream through the proxy.
func serveThroughProxy(t *testing.T, h http.Handler, opts *cutproxy.Options) (string, *cutproxy.Proxy) {
	t.Helper()
	srv := newServer(t, h)
	p, err := cutproxy.New(srv.Listener.Addr().String(), opts)
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	return "http://" + p.Addr() + path(keyT1), p
}

func newClient(t *testing.T) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 1024}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func TestFollowSurvivesRandomCuts(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		t.Run("seed "+strconv.FormatUint(seed, 10), func(t *testing.T) {
			w := newWindow()
			envs := script(keyT1, 200, 40)
			appendAll(t, w, keyT1, envs[:50])
			q := &requests{h: newHandler(t, w, nil)}
			url, p := serveThroughProxy(t, q, &cutproxy.Options{Seed: seed, MaxCuts: 40, Plan: cutproxy.Random{
				IDLineShare: 0.5, MinIDLine: 1, MaxIDLine: 8, MinBytes: 1, MaxBytes: 6000}.Plan()})
			go appendAll(t, w, keyT1, envs[50:]) // the rest arrives live
			var got seqRecorder
			var slept sleeps
			state, err := stream.Follow(context.Background(), url, &stream.FollowOptions{
				Client: newClient(t), OnEnvelope: got.on, Sleep: slept.sleep})
			require.NoError(t, err)
			assert.Equal(t, seqsUpTo(len(envs)), got.seqs, "every envelope once, in order, across the cuts")
			assert.Equal(t, wantState(t, envs), stateJSON(t, state))
			st := p.Stats()
			assert.GreaterOrEqual(t, st.Cuts, 15)
			assert.Positive(t, st.CutsAtIDLine)
			assert.Positive(t, st.CutsAtBytes)
			assert.Len(t, q.lastEventIDs(), st.Cuts+1, "one reconnect per cut, none after the end")
		})
	}
}

func TestFollowKeepsAFrameCutRightAfterItsIDLine(t *testing.T) {
	w := newWindow()
	envs := script(keyT1, 5, 3)
	appendAll(t, w, keyT1, envs)
	q := &requests{h: newHandler(t, w, &stream.HandlerOptions{Options: serve.Options{Retry: 700 * time.Millisecond}})}
	url, p := serveThroughProxy(t, q, &cutproxy.Options{Plan: cutproxy.Fixed(cutproxy.Cut{IDLine: 3})})
	var got seqRecorder
	var slept sleeps
	state, err := stream.Follow(context.Background(), url, &stream.FollowOptions{
		Client: newClient(t), OnEnvelope: got.on, Sleep: slept.sleep, Rand: func() float64 { return 0 }})
	require.NoError(t, err)
	assert.Equal(t, 1, p.Stats().CutsAtIDLine)
	assert.Equal(t, []string{"", "2"}, q.lastEventIDs(), "the cut frame's id was not applied")
	assert.Equal(t, seqsUpTo(len(envs)), got.seqs)
	assert.Equal(t, wantState(t, envs), stateJSON(t, state))
	assert.Equal(t, []time.Duration{700 * time.Millisecond}, slept.d, "the stream's retry line")
}

func TestFollowReturnsRefusalsTyped(t *testing.T) {
	w := replay.NewMemory(&replay.MemoryOptions{MaxFrames: 5})
	envs := script(keyT1, 20, 3) // 22 frames, 18..22 retained
	appendAll(t, w, keyT1, envs)
	q := &requests{h: newHandler(t, w, nil)}
	srv := newServer(t, q)
	for _, tc := range []struct {
		name, path, cursor string
		status             int
		sentinel           error
		lower, latest      int64
	}{
		{name: "unknown turn", path: path(replay.Key{ConversationID: "c-9", TurnID: "t-1"}), status: 404, sentinel: refusal.ErrTurnNotFound},
		{name: "stale", path: path(keyT1), cursor: "3", status: 410, sentinel: refusal.ErrStaleCursor, lower: 17, latest: 22},
		{name: "ahead", path: path(keyT1), cursor: "99", status: 409, sentinel: refusal.ErrCursorAhead, lower: 17, latest: 22},
		{name: "malformed", path: path(keyT1), cursor: "x", status: 400, sentinel: refusal.ErrInvalidCursor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(q.lastEventIDs())
			_, err := stream.Follow(context.Background(), srv.URL+tc.path, &stream.FollowOptions{LastEventID: tc.cursor})
			require.Error(t, err)
			refused, ok := errors.AsType[*stream.StatusError](err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, tc.status, refused.StatusCode)
			assert.ErrorIs(t, err, tc.sentinel)
			assert.Equal(t, refusal.CodeOf(tc.sentinel), refusal.CodeOf(err))
			if tc.lower+tc.latest > 0 {
				require.NotNil(t, refused.Lower)
				assert.Equal(t, tc.lower, *refused.Lower)
				assert.Equal(t, tc.latest, *refused.Latest)
			}
			assert.Len(t, q.lastEventIDs(), before+1, "a refusal is not retried")
		})
	}
}

func TestFollowRetries5xxWithCappedBackoff(t *testing.T) {
	w := newWindow()
	envs := script(keyT1, 3, 3)
	appendAll(t, w, keyT1, envs)
	q := &requests{h: newHandler(t, w, nil), fail: 6}
	srv := newServer(t, q)
	var slept sleeps
	state, err := stream.Follow(context.Background(), srv.URL+path(keyT1), &stream.FollowOptions{
		Retry: time.Second, MaxBackoff: 5 * time.Second, Sleep: slept.sleep, Rand: func() float64 { return 0.5 }})
	require.NoError(t, err)
	assert.Equal(t, wantState(t, envs), stateJSON(t, state))
	// 1, 2, 4, 8→5, 5, 5 seconds, each less a quarter (half the jitter span).
	s := time.Second
	assert.Equal(t, []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * s, 3750 * time.Millisecond, 3750 * time.Millisecond, 3750 * time.Millisecond}, slept.d)
	assert.Len(t, q.lastEventIDs(), 7)
}

func TestFollowGivesUpAfterMaxAttempts(t *testing.T) {
	q := &requests{h: http.NotFoundHandler(), fail: 1 << 30}
	srv := newServer(t, q)
	var slept sleeps
	_, err := stream.Follow(context.Background(), srv.URL+path(keyT1), &stream.FollowOptions{MaxAttempts: 3, Sleep: slept.sleep})
	require.Error(t, err)
	_, refused := errors.AsType[*stream.StatusError](err)
	assert.False(t, refused, "a 503 is no refusal")
	assert.Len(t, q.lastEventIDs(), 3)
	assert.Len(t, slept.d, 2)
}

func TestFollowStopsAt204(t *testing.T) {
	w := newWindow()
	envs := script(keyT1, 3, 3)
	appendAll(t, w, keyT1, envs)
	srv := newServer(t, newHandler(t, w, nil))
	state, err := stream.Follow(context.Background(), srv.URL+path(keyT1), nil)
	require.NoError(t, err)
	var got seqRecorder
	again, err := stream.Follow(context.Background(), srv.URL+path(keyT1), &stream.FollowOptions{
		State: state, LastEventID: strconv.Itoa(len(envs)), OnEnvelope: got.on})
	require.NoError(t, err)
	assert.Same(t, state, again)
	assert.Empty(t, got.seqs)
	assert.Equal(t, wantState(t, envs), stateJSON(t, again))
}

func TestFollowStopsWhenCtxEnds(t *testing.T) {
	w := newWindow()
	envs := script(keyT1, 3, 3)
	appendAll(t, w, keyT1, envs[:3]) // the turn goes on for ever
	srv := newServer(t, newHandler(t, w, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var got seqRecorder
	_, err := stream.Follow(ctx, srv.URL+path(keyT1), &stream.FollowOptions{OnEnvelope: func(env *chatprotocol.ChatEventEnvelope) error {
		got.on(env)
		if env.Seq == 3 {
			cancel()
		}
		return nil
	}})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, seqsUpTo(3), got.seqs)
}

func TestFollowRefusesWhatIsNoEventStream(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) }))
	defer srv.Close()
	var slept sleeps
	_, err := stream.Follow(context.Background(), srv.URL, &stream.FollowOptions{Sleep: slept.sleep})
	require.Error(t, err)
	assert.Empty(t, slept.d, "not retried")
}
