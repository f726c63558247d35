package realclients

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/realclient"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// The Go clients' figures, as the stream package's real-client tests have
// them: a turn of 61 frames appended every 20ms, a retry of 100ms, at most
// 8 cuts a run, byte cuts in [1, 2500] counted from the content type.
const (
	rcDeltas        = 56
	rcPace          = 20 * time.Millisecond
	rcRetry         = 100 * time.Millisecond
	rcMaxCuts       = 8
	rcMaxBytes      = 2500
	rcTimeout       = 45 * time.Second
	rcQuiet         = time.Second
	rcShutdownAfter = int64(20)
)

func rcKey(name string, seed uint64) replay.Key {
	return replay.Key{ConversationID: "c-real-go", TurnID: fmt.Sprintf("t-%s-%d", name, seed)}
}

func rcOptions(proxy cutproxy.Options) *realclient.Options {
	return &realclient.Options{Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry, Proxy: proxy}
}

// go-sse applies an id when it dispatches the frame and never dispatches
// an incomplete one: a cut anywhere, at random byte offsets and right
// after id lines, loses nothing. It reconnects after every end of a
// response, clean or not, so it ends on the 204 after the turn's end.
func TestRealClientGoSSEThroughCuts(t *testing.T) {
	t.Parallel()
	plans := []struct {
		name  string
		seeds []uint64
		plan  func(uint64) cutproxy.Options
	}{
		{"bytes", []uint64{21, 22, 23}, func(s uint64) cutproxy.Options { return realclient.ByteCuts(s, rcMaxCuts, rcMaxBytes, false) }},
		{"mixed", []uint64{24}, func(s uint64) cutproxy.Options { return realclient.Cuts(s, rcMaxCuts) }},
	}
	for _, p := range plans {
		for _, seed := range p.seeds {
			t.Run(fmt.Sprintf("cuts=%s/seed=%d", p.name, seed), func(t *testing.T) {
				t.Parallel()
				turn := realclient.Serve(t, rcKey("gosse-"+p.name, seed), rcOptions(p.plan(seed)))
				ctx, cancel := context.WithTimeout(t.Context(), rcTimeout)
				defer cancel()
				r := followGoSSE(ctx, t, turn.StreamURL(), nil)
				require.ErrorIs(t, r.Err, errTurnEnded, "go-sse stops on the 204 after the end")
				turn.RequireEveryFrameOnce(t, r.Messages)
				turn.RequireResumedWithLastEventID(t, true)
				realclient.RequireCutAndQuiet(t, turn.Proxy, p.name == "mixed", rcQuiet, func() int { return len(turn.Requests()) })
				t.Logf("%s, reconnects %d", turn.Figures(len(r.Messages), r.Took), r.Retries)
			})
		}
	}
}

// launchdarkly/eventsource applies an id when it dispatches the frame and
// never dispatches an incomplete one: a cut anywhere, at random byte
// offsets and right after id lines, loses nothing. It reconnects after
// every end of a response, clean or not, after the stream's retry; the 204
// after the turn's end reaches the reader as a SubscriptionError, and is
// retried after the stream's retry until the reader closes the stream (on
// the second).
func TestRealClientLaunchDarklyThroughCuts(t *testing.T) {
	t.Parallel()
	plans := []struct {
		name  string
		seeds []uint64
		plan  func(uint64) cutproxy.Options
	}{
		{"bytes", []uint64{51, 52}, func(s uint64) cutproxy.Options { return realclient.ByteCuts(s, rcMaxCuts, rcMaxBytes, false) }},
		{"mixed", []uint64{53}, func(s uint64) cutproxy.Options { return realclient.Cuts(s, rcMaxCuts) }},
	}
	for _, p := range plans {
		for _, seed := range p.seeds {
			t.Run(fmt.Sprintf("cuts=%s/seed=%d", p.name, seed), func(t *testing.T) {
				t.Parallel()
				turn := realclient.Serve(t, rcKey("launchdarkly-"+p.name, seed), rcOptions(p.plan(seed)))
				ctx, cancel := context.WithTimeout(t.Context(), rcTimeout)
				defer cancel()
				r := followLaunchDarkly(ctx, t, turn.StreamURL())
				require.ErrorIs(t, r.Err, errTurnEnded, "the reader stops on the 204s after the end")
				turn.RequireEveryFrameOnce(t, r.Messages)
				turn.RequireResumedWithLastEventID(t, true)
				reqs := turn.Requests()
				latest := strconv.Itoa(len(r.Messages))
				require.Equal(t, latest, reqs[len(reqs)-ldNoContents].LastEventID, "it retried the 204")
				realclient.RequireCutAndQuiet(t, turn.Proxy, p.name == "mixed", rcQuiet, func() int { return len(turn.Requests()) })
				t.Logf("%s, errors reported %d", turn.Figures(len(r.Messages), r.Took), r.Retries)
			})
		}
	}
}

// r3labs cut right after an id line: at the broken connection it hands
// over what it read since the last blank line as an event, which there is
// the whole frame with its id; every frame arrives once. Its turn's clean
// end is final to it (it returns nil); it asks again, and gets the 204,
// only when a cut fell after the last frame.
func TestRealClientR3labsThroughIDLineCuts(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{41, 42} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			turn := realclient.Serve(t, rcKey("r3labs-idline", seed), rcOptions(cutproxy.Options{
				Seed: seed, MaxCuts: rcMaxCuts, Arm: []byte("text/event-stream"),
				Plan: cutproxy.Random{IDLineShare: 1, MinIDLine: 2, MaxIDLine: 10}.Plan()}))
			ctx, cancel := context.WithTimeout(t.Context(), rcTimeout)
			defer cancel()
			r := followR3labs(ctx, t, turn.StreamURL(), rcRetry)
			if r.Err != nil {
				require.ErrorIs(t, r.Err, errTurnEnded)
			}
			turn.RequireEveryFrameOnce(t, r.Messages)
			turn.RequireResumedWithLastEventID(t, r.Err != nil)
			realclient.RequireCutAndQuiet(t, turn.Proxy, true, rcQuiet, func() int { return len(turn.Requests()) })
			t.Logf("%s, reconnects %d, ended with %v", turn.Figures(len(r.Messages), r.Took), r.Retries, r.Err)
		})
	}
}

// r3labs through cuts at random byte offsets. No server can give it every
// frame exactly once: when a connection breaks, its scanner hands over the
// bytes read since the last blank line as one more event (the EventSource
// rules discard them), filled with the last id when it has none. Such a
// torn tail is a prefix of the frame being written: truncated data under
// the previous frame's id; or the whole data under the previous id (the
// id line not yet read), which the resumed stream then sends again; or,
// cut inside the id line, a prefix of the id ("1" of "12"), which r3labs
// stores and resumes from, so that the server, rightly, sends the frames
// after seq 1 again. The test checks that this, and only this, happened:
// r3labsTornTails.
func TestRealClientR3labsThroughRandomByteCuts(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{31, 32, 33} {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			turn := realclient.Serve(t, rcKey("r3labs-bytes", seed), rcOptions(realclient.ByteCuts(seed, rcMaxCuts, rcMaxBytes, false)))
			ctx, cancel := context.WithTimeout(t.Context(), rcTimeout)
			defer cancel()
			r := followR3labs(ctx, t, turn.StreamURL(), rcRetry)
			if r.Err != nil {
				require.ErrorIs(t, r.Err, errTurnEnded)
			}
			got := r3labsTornTails(t, turn, r)
			realclient.RequireCutAndQuiet(t, turn.Proxy, false, rcQuiet, func() int { return len(turn.Requests()) })
			require.LessOrEqual(t, got.torn, turn.Proxy.Stats().Cuts, "at most one torn tail per cut")
			t.Logf("%s, reconnects %d; messages %d: torn tails %d (%d with the whole data under the previous id, %d with a prefix of the id), frames sent again after a torn id %d",
				turn.Figures(len(r.Messages), r.Took), r.Retries, len(r.Messages), got.torn, got.wholeData, got.prefixID, got.again)
		})
	}
}

// r3labsTally counts what r3labsTornTails found.
type r3labsTally struct {
	torn      int // torn tails
	wholeData int // torn tails with the frame's whole data under the previous id
	prefixID  int // torn tails whose id is a proper prefix of the frame's
	again     int // frames dispatched again after a torn id sent the client back
}

// r3labsTornTails checks r against a model of r3labs: it holds a last
// event id, which it sends on every request and stores from every event
// that has one; on each connection the server sends the frames after it,
// in order, each dispatched whole; the last event of a broken connection
// may instead be a torn tail, as TestRealClientR3labsThroughRandomByteCuts
// says. Every frame must arrive, and anything else fails the test.
func r3labsTornTails(t *testing.T, turn *realclient.Turn, r run) r3labsTally {
	t.Helper()
	frames := turn.Frames(t)
	byConn := make([][]realclient.Message, len(r.Requests))
	for i, m := range r.Messages {
		byConn[r.Conn[i]] = append(byConn[r.Conn[i]], m)
	}
	var tally r3labsTally
	seen := make([]int, len(frames)+1)
	stored := "" // the model's last event id
	for c, msgs := range byConn {
		require.Equal(t, stored, r.Requests[c], "request %d sends the id r3labs stored", c+1)
		next := 1
		if stored != "" {
			n, err := strconv.Atoi(stored)
			require.NoError(t, err)
			next = n + 1
		}
		for i, m := range msgs {
			if next <= len(frames) && m == frames[next-1] {
				if seen[next]++; seen[next] > 1 {
					tally.again++
				}
				stored = m.ID
				next++
				continue
			}
			require.True(t, i == len(msgs)-1 && c < len(byConn)-1,
				"request %d, message %d (%+v) is no frame, and not the last of a broken connection", c+1, i+1, m)
			tally.torn++
			if next > len(frames) || strings.HasPrefix(sse.EventHeartbeat, m.Event) && m.Event != sse.EventMessage {
				// a torn opening heartbeat: its data a prefix of {"tsMs":N}
				require.Equal(t, stored, m.ID, "a torn heartbeat carries the stored id")
				require.True(t, m.Data == "" || strings.HasPrefix(m.Data, `{"tsMs":`) || strings.HasPrefix(`{"tsMs":`, m.Data), "torn heartbeat %+v", m)
				continue
			}
			want := frames[next-1]
			require.Equal(t, sse.EventMessage, m.Event, "torn tail %+v", m)
			require.True(t, strings.HasPrefix(want.Data, m.Data), "torn tail %+v: its data is a prefix of frame %s's", m, want.ID)
			switch {
			case m.ID == stored:
				if m.Data == want.Data {
					tally.wholeData++
				}
			case m.ID != want.ID && strings.HasPrefix(want.ID, m.ID):
				tally.prefixID++
				stored = m.ID // r3labs stores it: the next request goes back
			default:
				t.Fatalf("torn tail %+v: its id is neither the stored %q nor a prefix of %q", m, stored, want.ID)
			}
		}
	}
	for seq := 1; seq <= len(frames); seq++ {
		require.Positive(t, seen[seq], "frame %d arrived", seq)
	}
	return tally
}

// The Go clients across a graceful shutdown mid-turn: the instance serving
// them shuts down; its streams are aborted after a whole frame, never ended
// cleanly, so each client (go-sse, r3labs, launchdarkly), r3labs too (which takes a clean end as final),
// resumes on the second instance and gets every frame once. Plain, the
// stream is parked on a connection the Handler took over, which Close
// closes without the last chunk; under gzhttp it waits on its request's
// goroutine, which Close aborts with http.ErrAbortHandler (gzhttp's
// deferred Close may write the gzip trailer, never the last chunk).
func TestRealClientGoClientsAcrossAGracefulShutdown(t *testing.T) {
	t.Parallel()
	clients := map[string]func(context.Context, *testing.T, string) run{
		"go-sse":       func(ctx context.Context, t *testing.T, u string) run { return followGoSSE(ctx, t, u, nil) },
		"r3labs":       func(ctx context.Context, t *testing.T, u string) run { return followR3labs(ctx, t, u, rcRetry) },
		"launchdarkly": func(ctx context.Context, t *testing.T, u string) run { return followLaunchDarkly(ctx, t, u) },
	}
	for _, name := range []string{"go-sse", "r3labs", "launchdarkly", "go-sse/gzhttp", "r3labs/gzhttp", "launchdarkly/gzhttp"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			client, wrapped := strings.CutSuffix(name, "/gzhttp")
			o := &realclient.Options{Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry, Instances: 2, ShutdownAfter: rcShutdownAfter}
			if wrapped {
				o.Wrap = gzipped // streams on their requests' goroutines, aborted by a panic
			}
			turn := realclient.Serve(t, rcKey("shutdown-"+strings.ReplaceAll(name, "/", "-"), 0), o)
			ctx, cancel := context.WithTimeout(t.Context(), rcTimeout)
			defer cancel()
			r := clients[client](ctx, t, turn.StreamURL())
			if client != "r3labs" || r.Err != nil {
				require.ErrorIs(t, r.Err, errTurnEnded)
			}
			turn.RequireEveryFrameOnce(t, r.Messages)
			turn.RequireResumedOnSecond(t)
			t.Logf("%s, reconnects %d, ended with %v", turn.Figures(len(r.Messages), r.Took), r.Retries, r.Err)
		})
	}
}

// r3labs's two quirks on bytes written by hand, without the Handler: a
// comment (": heartbeat") is handed over as an empty message carrying the
// last id, and at a broken connection the bytes since the last blank line
// are handed over as a message, here "data: b\nid: 1" cut inside the id
// line "id: 12"; r3labs stores that "1" and resumes from it.
func TestR3labsQuirksOnHandWrittenBytes(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		lastIDs []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lastIDs = append(lastIDs, r.Header.Get("Last-Event-ID"))
		n := len(lastIDs)
		mu.Unlock()
		if n > 1 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: a\nid: 11\n\n: heartbeat\n\ndata: b\nid: 1")
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler) // a broken body, as a cut gives
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), rcTimeout)
	defer cancel()
	r := followR3labs(ctx, t, srv.URL, rcRetry)
	require.ErrorIs(t, r.Err, errTurnEnded)
	require.Equal(t, []realclient.Message{
		{ID: "11", Event: sse.EventMessage, Data: "a"},
		{ID: "11", Event: sse.EventMessage, Data: ""}, // the comment
		{ID: "1", Event: sse.EventMessage, Data: "b"}, // the torn tail
	}, r.Messages)
	require.Equal(t, []string{"", "1"}, r.Requests, "it resumed from the torn id")
}
