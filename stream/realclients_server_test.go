package stream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
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
	"github.com/Papercusp/chat-protocol-go/sse"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// rcHarnessDir holds the real clients' harness: the npm package with its
// lockfile, the Node script and the browser page.
var rcHarnessDir = filepath.Join("..", "internal", "testkit", "eventsource")

// rcTurnScript returns a scripted turn of key as envelope JSON, one per
// seq: started, a tool call and its result, deltas deltas (with text that
// JSON escapes and text outside ASCII), a card, completed.
func rcTurnScript(key replay.Key, deltas int) []string {
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

// rcRequest is one request for the turn's stream as the handler got it.
type rcRequest struct {
	LastEventID string
	At          time.Time
}

// rcTurn is one scripted turn served by the real handler behind a cutting
// proxy, with the browser harness served on the same origin.
type rcTurn struct {
	Key    replay.Key
	Window replay.Window
	Proxy  *cutproxy.Proxy
	// Base is the proxy's origin, "http://127.0.0.1:port".
	Base string
	// Results receives each body the browser page POSTs.
	Results chan []byte

	mu       sync.Mutex
	requests []rcRequest
	ended    time.Time     // when the last frame was appended
	first    chan struct{} // closed on the first stream request
	once     sync.Once
}

// rcTurnOptions configures rcServe.
type rcTurnOptions struct {
	Deltas int           // deltas of the scripted turn
	Pace   time.Duration // time between two appended frames
	Retry  time.Duration // the handler's retry line
	Proxy  cutproxy.Options
}

// rcServe starts the handler over a window holding key's turn, a server
// for it and the harness files, and the cutting proxy in front. The turn's
// first frame is appended at once; the others follow one per Pace from the
// first stream request on, so that the client meets the turn live.
func rcServe(t *testing.T, key replay.Key, o rcTurnOptions) *rcTurn {
	t.Helper()
	envs := rcTurnScript(key, o.Deltas)
	window := replay.NewMemory(nil)
	turn := &rcTurn{Key: key, Window: window, Results: make(chan []byte, 4), first: make(chan struct{})}
	parsed := make([]chatprotocol.ChatEventEnvelope, len(envs))
	for i, s := range envs {
		env, err := chatprotocol.ParseEnvelope([]byte(s))
		require.NoError(t, err, "envelope %d", i+1)
		parsed[i] = env
	}
	_, err := window.Append(context.Background(), key, &parsed[0])
	require.NoError(t, err)

	h, err := stream.NewHandler(window, &stream.HandlerOptions{
		Authorize: func(*http.Request, replay.Key) error { return nil },
		Retry:     o.Retry,
	})
	require.NoError(t, err)
	m := http.NewServeMux()
	m.Handle(pattern, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		turn.mu.Lock()
		turn.requests = append(turn.requests, rcRequest{LastEventID: r.Header.Get("Last-Event-ID"), At: time.Now()})
		turn.mu.Unlock()
		turn.once.Do(func() { close(turn.first) })
		h.ServeHTTP(w, r)
	}))
	m.HandleFunc("GET /harness/page.html", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(rcHarnessDir, "page.html"))
	})
	m.HandleFunc("GET /harness/page.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, filepath.Join(rcHarnessDir, "page.js"))
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
	srv := httptest.NewServer(m)

	proxy, err := cutproxy.New(srv.Listener.Addr().String(), &o.Proxy)
	require.NoError(t, err)
	turn.Proxy = proxy
	turn.Base = "http://" + proxy.Addr()

	ctx, cancel := context.WithCancel(context.Background())
	appended := make(chan struct{})
	go func() {
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
			if _, err := window.Append(ctx, key, &parsed[i]); err != nil {
				t.Errorf("append seq %d: %v", i+1, err)
				return
			}
		}
		turn.mu.Lock()
		turn.ended = time.Now()
		turn.mu.Unlock()
	}()
	t.Cleanup(func() {
		cancel()
		<-appended
		require.NoError(t, proxy.Close())
		h.Close()
		srv.Close()
	})
	return turn
}

// StreamURL is the turn's stream through the proxy.
func (turn *rcTurn) StreamURL() string { return turn.Base + path(turn.Key) }

// Requests returns the stream requests the handler got so far.
func (turn *rcTurn) Requests() []rcRequest {
	turn.mu.Lock()
	defer turn.mu.Unlock()
	return append([]rcRequest(nil), turn.requests...)
}

// LiveRequests counts the stream requests that came while the turn was
// still being appended to.
func (turn *rcTurn) LiveRequests() int {
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

// rcCuts is the proxy plan of the real-client tests: the first two
// connections are cut right after an id line, later ones at a random id
// line or byte count, until maxCuts cuts. Byte counts start at the
// response's content type, so a page or result request is never cut
// unless it reuses a connection that carried a stream.
func rcCuts(seed uint64, maxCuts int) cutproxy.Options {
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

// rcMessage is one message a real client dispatched.
type rcMessage struct {
	ID    string `json:"id"`
	Event string `json:"event"`
	Data  string `json:"data"`
}

// requireEveryFrameOnce checks that got is every frame the window holds of
// the turn, once each, in seq order: id, data bytes, and the event name
// message, under which every envelope dispatches.
func (turn *rcTurn) requireEveryFrameOnce(t *testing.T, got []rcMessage) {
	t.Helper()
	b, frames, err := turn.Window.Read(context.Background(), turn.Key, 0, math.MaxInt)
	require.NoError(t, err)
	require.True(t, b.Ended, "the turn ended")
	want := make([]rcMessage, len(frames))
	for i, f := range frames {
		want[i] = rcMessage{ID: fmt.Sprint(f.Seq), Event: sse.EventMessage, Data: string(f.Data)}
	}
	if len(got) != len(want) {
		ids := make([]string, len(got))
		for i, m := range got {
			ids[i] = m.ID
		}
		t.Fatalf("got %d messages, want %d: ids %s", len(got), len(want), strings.Join(ids, ","))
	}
	require.Equal(t, want, got)
}

// requireResumedWithLastEventID checks the stream requests: more than one;
// none but those before the client had a frame goes without a cursor; every
// Last-Event-ID is a seq of the turn and never goes back; the last one is
// the turn's latest seq (the request answered 204).
func (turn *rcTurn) requireResumedWithLastEventID(t *testing.T) {
	t.Helper()
	b, _, err := turn.Window.Read(context.Background(), turn.Key, 0, math.MaxInt)
	require.NoError(t, err)
	latest := int(b.Latest)
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
	require.Equal(t, strconv.Itoa(latest), reqs[len(reqs)-1].LastEventID, "the last request resumes after the end")
}
