// Package realclient serves a scripted turn for tests that follow it with
// SSE clients nobody here wrote: the stream package's Handler over a
// replay window, on one or two servers (one shared window), behind a
// cutting proxy that is also the load balancer (docs/contract.md section
// 14). It also runs the Node harness in internal/testkit/eventsource and
// checks what a client dispatched against what the window holds.
//
// The tests that use it need the clients installed (`bash .ci/clients`);
// without them they skip, unless CHATPROTOCOL_REAL_CLIENTS is set, as CI
// sets it (see [Missing]).
package realclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/sse"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// Pattern is the route every instance mounts the Handler on.
const Pattern = "GET /conversations/{conversation}/turns/{turn}/events"

// Path returns the URL path of key's stream.
func Path(key replay.Key) string {
	return "/conversations/" + key.ConversationID + "/turns/" + key.TurnID + "/events"
}

// Script returns a scripted turn of key as envelope JSON, one per seq:
// started, a tool call and its result, deltas deltas (with text that JSON
// escapes and text outside ASCII), a card, completed.
func Script(key replay.Key, deltas int) []string {
	var events []string
	events = append(events,
		`{"type":"lifecycle","status":"started"}`,
		`{"type":"tool_call","callId":"call-1","name":"search_docs","input":{"q":"refund policy"}}`,
		`{"type":"tool_result","callId":"call-1","status":"ok","output":{"hits":2}}`)
	words := []string{"Refunds", "are", "accepted", `"within"`, "30", "days", "ümlaut", "👟", "tab\there", "line\nbreak", "<b>", "50%"}
	for i := range deltas {
		text, _ := json.Marshal(fmt.Sprintf("%d:%s ", i, words[i%len(words)]))
		events = append(events, `{"type":"delta","text":`+string(text)+`}`)
	}
	events = append(events,
		`{"type":"card","card":{"correlationId":"corr-1","createdAt":1764500001000,"prompt":"Was this helpful?","presentation":{"kind":"radio","options":[{"id":"y","label":"Yes"},{"id":"n","label":"No"}]},"allowDecline":true}}`,
		`{"type":"lifecycle","status":"completed","usage":{"totalTokens":431}}`)
	envs := make([]string, len(events))
	for i, ev := range events {
		envs[i] = fmt.Sprintf(`{"schemaVersion":1,"conversationId":%q,"turnId":%q,"eventId":"e-%d","seq":%d,"event":%s}`,
			key.ConversationID, key.TurnID, i+1, i+1, ev)
	}
	return envs
}

// Options configures Serve. Zero fields mean: 56 deltas, 20ms pace, the
// Handler's default retry and heartbeat interval, one instance, no
// middleware, no pause, no shutdown.
type Options struct {
	Deltas int           // deltas of the scripted turn (the turn has Deltas+5 frames)
	Pace   time.Duration // time between two appended frames
	Retry  time.Duration // the Handler's retry line
	// HeartbeatInterval is the Handler's ([stream.HandlerOptions]).
	HeartbeatInterval time.Duration
	// Proxy configures the cutting proxy in front of the instances.
	Proxy cutproxy.Options
	// Wrap, when set, wraps each instance's stream route (a compression
	// middleware, say); the Handler then never takes a connection over.
	Wrap func(http.Handler) http.Handler
	// Instances is the number of servers ([http.Server]), each with its own
	// Handler over the one window: 1 or 2. The proxy sends every connection to the
	// first until the shutdown, and to the second after it.
	Instances int
	// ShutdownAfter, with two instances, shuts the first down gracefully
	// once the frame of this seq is appended: the proxy sends new
	// connections to the second, then [http.Server.Shutdown] (which calls
	// [stream.Handler.Close], registered with
	// [http.Server.RegisterOnShutdown]) and [stream.Handler.Shutdown] run,
	// while the turn goes on.
	ShutdownAfter int64
	// PauseAfter and PauseFor pause the appends once the frame of seq
	// PauseAfter is appended, for PauseFor: the client catches up and
	// idles, then the turn is live again.
	PauseAfter int64
	PauseFor   time.Duration
}

// Request is one request for the turn's stream as an instance got it.
type Request struct {
	Instance       int // 0 or 1
	LastEventID    string
	AcceptEncoding string
	At             time.Time
}

// Turn is one scripted turn served by the real Handler behind a cutting
// proxy, with the browser harness served on the same origin.
type Turn struct {
	Key    replay.Key
	Window replay.Window
	Proxy  *cutproxy.Proxy
	// Base is the proxy's origin, "http://127.0.0.1:port".
	Base string
	// Results receives each body the browser page POSTs.
	Results chan []byte

	instances []*instance
	shutdown  chan error // the first instance's graceful shutdown, once done

	mu        sync.Mutex
	requests  []Request
	appended  map[int64]time.Time // when each seq was appended
	ended     time.Time           // when the last frame was appended
	shutAfter int64               // the latest seq when the shutdown began
	first     chan struct{}
	once      sync.Once
}

// instance is one http.Server with its own Handler.
type instance struct {
	srv  *http.Server
	h    *stream.Handler
	addr string
	done chan struct{} // Serve returned
}

// Serve starts the instances over a memory window holding key's turn and
// the cutting proxy in front. The turn's first frame is appended at once;
// the others follow one per Pace from the first stream request on, so
// that the client meets the turn live. Everything stops when t ends.
func Serve(t testing.TB, key replay.Key, o *Options) *Turn {
	t.Helper()
	opts := Options{Deltas: 56, Pace: 20 * time.Millisecond, Instances: 1}
	if o != nil {
		opts = *o
		opts.Deltas = cmpOr(opts.Deltas, 56)
		opts.Pace = cmpOr(opts.Pace, 20*time.Millisecond)
		opts.Instances = cmpOr(opts.Instances, 1)
	}
	require.LessOrEqual(t, opts.Instances, 2, "one or two instances")
	envs := Script(key, opts.Deltas)
	window := replay.NewMemory(nil)
	turn := &Turn{Key: key, Window: window, Results: make(chan []byte, 4), first: make(chan struct{}), shutdown: make(chan error, 1),
		appended: make(map[int64]time.Time)}
	parsed := make([]chatprotocol.ChatEventEnvelope, len(envs))
	for i, s := range envs {
		env, err := chatprotocol.ParseEnvelope([]byte(s))
		require.NoError(t, err, "envelope %d", i+1)
		parsed[i] = env
	}
	_, err := window.Append(context.Background(), key, &parsed[0])
	require.NoError(t, err)
	turn.appended[1] = time.Now()

	for i := range opts.Instances {
		turn.instances = append(turn.instances, turn.startInstance(t, i, window, &opts))
	}
	proxy, err := cutproxy.New(turn.instances[0].addr, &opts.Proxy)
	require.NoError(t, err)
	turn.Proxy = proxy
	turn.Base = "http://" + proxy.Addr()

	ctx, cancel := context.WithCancel(context.Background())
	appended := make(chan struct{})
	go turn.appendRest(ctx, t, parsed, &opts, appended)
	t.Cleanup(func() {
		cancel()
		<-appended
		require.NoError(t, proxy.Close())
		for _, in := range turn.instances {
			_ = in.srv.Close()
			sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
			require.NoError(t, in.h.Shutdown(sctx), "the instance's streams end once closed")
			scancel()
			<-in.done
		}
	})
	return turn
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// startInstance starts instance i: its Handler over window, its routes
// (the stream, recorded, and the browser harness) and its http.Server,
// with the Handler's Close registered for the server's shutdown.
func (turn *Turn) startInstance(t testing.TB, i int, window replay.Window, o *Options) *instance {
	t.Helper()
	h, err := stream.NewHandler(window, &stream.HandlerOptions{Authorize: func(*http.Request, replay.Key) error { return nil }, Options: serve.Options{Retry: o.Retry, HeartbeatInterval: o.HeartbeatInterval}})
	require.NoError(t, err)
	var route http.Handler = h
	if o.Wrap != nil {
		route = o.Wrap(h)
	}
	m := http.NewServeMux()
	m.Handle(Pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		turn.mu.Lock()
		turn.requests = append(turn.requests, Request{Instance: i, LastEventID: r.Header.Get("Last-Event-ID"),
			AcceptEncoding: r.Header.Get("Accept-Encoding"), At: time.Now()})
		turn.mu.Unlock()
		turn.once.Do(func() { close(turn.first) })
		route.ServeHTTP(w, r)
	}))
	dir := HarnessDir(t)
	m.HandleFunc("GET /harness/page.html", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(dir, "page.html"))
	})
	m.HandleFunc("GET /harness/page.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(dir, "page.js"))
	})
	m.HandleFunc("POST /harness/result", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case turn.Results <- b:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: m, ReadHeaderTimeout: 5 * time.Second}
	srv.RegisterOnShutdown(h.Close)
	in := &instance{srv: srv, h: h, addr: ln.Addr().String(), done: make(chan struct{})}
	go func() {
		defer close(in.done)
		_ = srv.Serve(ln) // http.ErrServerClosed once shut down or closed
	}()
	return in
}

// appendRest appends the turn's frames after the first, one per Pace, from
// the first stream request on, pausing and shutting the first instance
// down as o says.
func (turn *Turn) appendRest(ctx context.Context, t testing.TB, parsed []chatprotocol.ChatEventEnvelope, o *Options, appended chan<- struct{}) {
	defer close(appended)
	select {
	case <-turn.first:
	case <-ctx.Done():
		return
	}
	tick := time.NewTicker(o.Pace)
	defer tick.Stop()
	for i := 1; i < len(parsed); i++ {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		if _, err := turn.Window.Append(ctx, turn.Key, &parsed[i]); err != nil {
			t.Errorf("append seq %d: %v", i+1, err)
			return
		}
		seq := int64(i + 1)
		turn.mu.Lock()
		turn.appended[seq] = time.Now()
		turn.mu.Unlock()
		if len(turn.instances) == 2 && seq == o.ShutdownAfter {
			go turn.shutdownFirst(seq)
		}
		if seq == o.PauseAfter && o.PauseFor > 0 {
			select {
			case <-time.After(o.PauseFor):
			case <-ctx.Done():
				return
			}
		}
	}
	turn.mu.Lock()
	turn.ended = time.Now()
	turn.mu.Unlock()
}

// shutdownFirst shuts the first instance down gracefully, after the proxy
// stopped sending it new connections, and reports the outcome on
// turn.shutdown.
func (turn *Turn) shutdownFirst(latest int64) {
	turn.mu.Lock()
	turn.shutAfter = latest
	turn.mu.Unlock()
	turn.Proxy.SetTargets(turn.instances[1].addr)
	a := turn.instances[0]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := a.srv.Shutdown(ctx) // closes the listener and idle connections; RegisterOnShutdown runs Close
	if err == nil {
		err = a.h.Shutdown(ctx) // every stream, parked ones too, has ended
	}
	turn.shutdown <- err
}

// AppendedAt returns when the frame of seq was appended (zero when not
// yet).
func (turn *Turn) AppendedAt(seq int64) time.Time {
	turn.mu.Lock()
	defer turn.mu.Unlock()
	return turn.appended[seq]
}

// StreamURL is the turn's stream through the proxy.
func (turn *Turn) StreamURL() string { return turn.Base + Path(turn.Key) }

// Requests returns the stream requests the instances got so far.
func (turn *Turn) Requests() []Request {
	turn.mu.Lock()
	defer turn.mu.Unlock()
	return append([]Request(nil), turn.requests...)
}

// LiveRequests counts the stream requests that came while the turn was
// still being appended to.
func (turn *Turn) LiveRequests() int {
	turn.mu.Lock()
	defer turn.mu.Unlock()
	n := 0
	for _, r := range turn.requests {
		if turn.ended.IsZero() || r.At.Before(turn.ended) {
			n++
		}
	}
	return n
}

// Frames returns the turn's frames as a client dispatches them: id, the
// event name message, data.
func (turn *Turn) Frames(t testing.TB) []Message {
	t.Helper()
	b, frames, err := turn.Window.Read(context.Background(), turn.Key, 0, math.MaxInt)
	require.NoError(t, err)
	require.True(t, b.Ended, "the turn ended")
	want := make([]Message, len(frames))
	for i, f := range frames {
		want[i] = Message{ID: strconv.FormatInt(f.Seq, 10), Event: sse.EventMessage, Data: string(f.Data)}
	}
	return want
}

// RequireEveryFrameOnce checks that got is every frame the window holds of
// the turn, once each, in seq order: id, data bytes, and the event name
// message, under which every envelope dispatches.
func (turn *Turn) RequireEveryFrameOnce(t testing.TB, got []Message) {
	t.Helper()
	want := turn.Frames(t)
	if len(got) != len(want) {
		t.Fatalf("got %d messages, want %d: ids %s", len(got), len(want), IDs(got))
	}
	require.Equal(t, want, got)
}

// IDs lists the ids of msgs, comma-separated.
func IDs(msgs []Message) string {
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		ids[i] = m.ID
	}
	return strings.Join(ids, ",")
}

// RequireResumedWithLastEventID checks the stream requests: more than one;
// none but those before the client had a frame goes without a cursor; every
// Last-Event-ID is a seq of the turn and never goes back; the last one is
// the turn's latest seq (the request answered 204) when endWith204.
func (turn *Turn) RequireResumedWithLastEventID(t testing.TB, endWith204 bool) {
	t.Helper()
	latest := len(turn.Frames(t))
	reqs := turn.Requests()
	require.Greater(t, len(reqs), 1, "the client reconnected")
	prev := 0
	for i, r := range reqs {
		if r.LastEventID == "" {
			require.Zero(t, prev, "request %d: no Last-Event-ID after one was sent", i+1)
			continue
		}
		n, err := strconv.Atoi(r.LastEventID)
		require.NoError(t, err, "request %d: Last-Event-ID %q", i+1, r.LastEventID)
		require.GreaterOrEqual(t, n, max(prev, 1), "request %d: Last-Event-ID never goes back", i+1)
		require.LessOrEqual(t, n, latest)
		prev = n
	}
	if endWith204 {
		require.Equal(t, strconv.Itoa(latest), reqs[len(reqs)-1].LastEventID, "the last request resumes after the end")
	}
}

// RequireResumedOnSecond checks a run with a shutdown: the first instance
// shut down without error (every stream ended in time); the client was
// served by it first, then came to the second with a Last-Event-ID from
// the middle of the turn (the first may still write a frame appended while
// it shuts down).
func (turn *Turn) RequireResumedOnSecond(t testing.TB) {
	t.Helper()
	select {
	case err := <-turn.shutdown:
		require.NoError(t, err, "the first instance shut down gracefully")
		turn.shutdown <- err // for a later call
	case <-time.After(15 * time.Second):
		t.Fatalf("the first instance's shutdown did not end")
	}
	turn.mu.Lock()
	shutAfter := turn.shutAfter
	turn.mu.Unlock()
	reqs := turn.Requests()
	require.NotEmpty(t, reqs)
	require.Equal(t, 0, reqs[0].Instance, "the client started on the first instance")
	var onSecond []Request
	for _, r := range reqs {
		if r.Instance == 1 {
			onSecond = append(onSecond, r)
		}
	}
	require.NotEmpty(t, onSecond, "the client resumed on the second instance")
	n, err := strconv.ParseInt(onSecond[0].LastEventID, 10, 64)
	require.NoError(t, err, "the first request to the second instance resumes with a Last-Event-ID")
	require.Positive(t, n, "the client had frames from the first instance")
	require.Less(t, n, int64(len(turn.Frames(t))), "the second instance served the rest of the turn (the shutdown began after seq %d)", shutAfter)
}

// Message is one message a client dispatched.
type Message struct {
	ID    string `json:"id"`
	Event string `json:"event"`
	Data  string `json:"data"`
}

// Cuts is the proxy plan of the cut tests of clients that apply an id at
// dispatch: the first two connections are cut right after an id line,
// later ones at a random id line or byte count, until maxCuts cuts. Byte
// counts start at the response's content type, so a page or result request
// is never cut unless it reuses a connection that carried a stream.
func Cuts(seed uint64, maxCuts int) cutproxy.Options {
	random := cutproxy.Random{IDLineShare: 0.5, MinIDLine: 2, MaxIDLine: 10, MinBytes: 200, MaxBytes: 3000}.Plan()
	return cutproxy.Options{
		Seed:    seed,
		MaxCuts: maxCuts,
		Arm:     []byte("text/event-stream"),
		Plan: func(conn int, rng *rand.Rand) cutproxy.Cut {
			if conn < 2 {
				return cutproxy.Cut{IDLine: 2 + rng.IntN(6)}
			}
			return random(conn, rng)
		},
	}
}

// ByteCuts is the proxy plan of random byte offsets: every connection is
// cut after a byte count drawn uniformly from [1, maxBytes] (counted from
// the response's content type, so headers, chunk framing and every byte of
// a frame can be hit), until maxCuts cuts. spare moves a cut that falls
// right after an id line's end one byte later ([cutproxy.Cut.SpareIDLineEnd]),
// for clients that apply an id as soon as they read it.
func ByteCuts(seed uint64, maxCuts int, maxBytes int64, spare bool) cutproxy.Options {
	return cutproxy.Options{
		Seed:    seed,
		MaxCuts: maxCuts,
		Arm:     []byte("text/event-stream"),
		Plan:    cutproxy.Random{MinBytes: 1, MaxBytes: maxBytes, SpareIDLineEnd: spare}.Plan(),
	}
}

// RequireCutAndQuiet checks the proxy's figures: it cut (right after an id
// line at least once when atIDLine), the client came back (more than one
// connection), and no connection is opened and no request sent (when
// requests is not nil) for quiet after the end.
func RequireCutAndQuiet(t testing.TB, proxy *cutproxy.Proxy, atIDLine bool, quiet time.Duration, requests func() int) {
	t.Helper()
	s := proxy.Stats()
	require.Positive(t, s.Cuts, "the proxy cut connections")
	if atIDLine {
		require.Positive(t, s.CutsAtIDLine, "the proxy cut right after an id line")
	}
	require.Greater(t, s.Connections, 1, "the client reconnected")
	var before int
	if requests != nil {
		before = requests()
	}
	time.Sleep(quiet) // watching for something that must not happen
	require.Equal(t, s.Connections, proxy.Stats().Connections, "no connection after the end")
	if requests != nil {
		require.Equal(t, before, requests(), "no request after the end")
	}
}

// Figures returns a run's figures for the log: frames, cuts, connections,
// requests, per instance when there are two.
func (turn *Turn) Figures(frames int, took time.Duration) string {
	s := turn.Proxy.Stats()
	reqs := turn.Requests()
	per := [2]int{}
	for _, r := range reqs {
		per[r.Instance]++
	}
	f := fmt.Sprintf("frames %d, cuts %d (%d right after an id line, %d after a byte count, %d of them moved past an id line's end), connections %d, stream requests %d (%d while the turn was live)",
		frames, s.Cuts, s.CutsAtIDLine, s.CutsAtBytes, s.SparedIDLineEnds, s.Connections, len(reqs), turn.LiveRequests())
	if len(turn.instances) == 2 {
		f += fmt.Sprintf(", %d on the first instance and %d on the second", per[0], per[1])
	}
	return f + ", took " + took.Round(time.Millisecond).String()
}
