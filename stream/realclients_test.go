package stream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/realclient"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The real-client tests follow one turn's stream from the Handler with
// clients nobody here wrote, the npm eventsource package (its 4.x and 5.x
// lines), the npm @microsoft/fetch-event-source package (its README's
// advanced and basic usages), and the npm eventsource-parser package in a
// hand-written reconnect loop under Node, and Chromium's own EventSource,
// through a proxy that cuts their connections (docs/contract.md
// section 14), or across a graceful shutdown of the instance serving them.
// The Go clients, and a compression middleware, are in the nested module
// internal/realclients. They need the clients installed (`bash .ci/clients`);
// without them they skip, unless CHATPROTOCOL_REAL_CLIENTS is set, as CI
// sets it.
//
// Frames are written data first and id last. A client that applies an id
// when it dispatches the frame (the EventSource rules: npm eventsource,
// Chromium) survives a cut anywhere. fetch-event-source applies an id as
// soon as it reads the id line: cut right after that line, before the blank
// line, it holds the id of a frame it never dispatched and resumes past it.
// No layout protects that one point; its random cuts spare exactly that
// point (cutproxy.Cut.SpareIDLineEnd), and a test of its own cuts there and
// checks that the frame of that id, and only it, is lost.
const (
	rcDeltas   = 56                    // the scripted turn has 61 frames
	rcPace     = 20 * time.Millisecond // between two appended frames
	rcRetry    = 100 * time.Millisecond
	rcMaxCuts  = 8
	rcMaxBytes = 2500             // random byte cuts fall in [1, rcMaxBytes]
	rcTimeout  = 45 * time.Second // for one client to follow the turn
	rcQuiet    = time.Second      // no connection after the end for this long
)

// The proxy's seeds, one run of the client each, in parallel.
var (
	rcNodeSeeds      = []uint64{1, 2, 3}
	rcNodeByteSeeds  = []uint64{7, 8}
	rcParserSeeds    = []uint64{61}
	rcParserBytes    = []uint64{62, 63}
	rcFetchSeeds     = []uint64{11, 12, 13}
	rcFetchBasic     = []uint64{14, 15}
	rcChromiumSeeds  = []uint64{4, 5}
	rcShutdownAfter  = int64(20) // the seq after which the first instance shuts down
	rcFetchIDLineCut = 5         // the id line fetch-event-source's pinned cut follows
)

// rcKey is the key of one run's turn.
func rcKey(name string, seed uint64) replay.Key {
	return replay.Key{ConversationID: "c-real", TurnID: fmt.Sprintf("t-%s-%d", name, seed)}
}

// rcFollow runs script on turn's stream and checks that it exited 0 (a 204
// after the end) with every frame once, having resumed by Last-Event-ID.
func rcFollow(t *testing.T, turn *realclient.Turn, node, script string) realclient.NodeRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), rcTimeout+10*time.Second)
	defer cancel()
	run := realclient.FollowWithNode(ctx, t, node, script, turn.StreamURL(), rcTimeout)
	require.Equal(t, 0, run.Exit, "%s exits 0 on the 204 after the end; its stderr:\n%s", script, strings.Join(run.Lines, "\n"))
	turn.RequireEveryFrameOnce(t, run.Messages)
	turn.RequireResumedWithLastEventID(t, true)
	return run
}

// The npm eventsource package, its 4.x line and its 5.x line, each through
// cuts right after id lines and at random byte offsets: it applies an id at
// dispatch, reconnects after a cut and after a clean end, and stops on the
// 204 after the turn's end.
func TestRealClientNodeEventSourceThroughCuts(t *testing.T) {
	t.Parallel()
	plans := map[string]func(uint64) cutproxy.Options{
		"mixed": func(seed uint64) cutproxy.Options { return realclient.Cuts(seed, rcMaxCuts) },
		"bytes": func(seed uint64) cutproxy.Options { return realclient.ByteCuts(seed, rcMaxCuts, rcMaxBytes, false) },
	}
	seeds := map[string][]uint64{"mixed": rcNodeSeeds, "bytes": rcNodeByteSeeds}
	for _, script := range []string{realclient.EventSourceScript, realclient.EventSource5Script} {
		node := realclient.Node(t, script)
		for _, name := range []string{"mixed", "bytes"} {
			for _, seed := range seeds[name] {
				t.Run(fmt.Sprintf("%s/cuts=%s/seed=%d", realclient.ScriptName(script), name, seed), func(t *testing.T) {
					t.Parallel()
					turn := realclient.Serve(t, rcKey(realclient.ScriptName(script)+"-"+name, seed),
						&realclient.Options{Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry, Proxy: plans[name](seed)})
					run := rcFollow(t, turn, node, script)
					require.Contains(t, run.Lines[len(run.Lines)-1], `"code":204`, "the last error event is the 204")
					realclient.RequireCutAndQuiet(t, turn.Proxy, name == "mixed", rcQuiet, func() int { return len(turn.Requests()) })
					t.Log(turn.Figures(len(run.Messages), run.Took))
				})
			}
		}
	}
}

// rcParserDone is parser-follow.mjs's summary line.
type rcParserDone struct {
	Done struct {
		Exit      int `json:"exit"`
		Opens     int `json:"opens"`
		CleanEnds int `json:"cleanEnds"`
		Errors    int `json:"errors"`
		RetryMs   int `json:"retryMs"`
	} `json:"done"`
}

// eventsource-parser's EventSourceParserStream over Node's fetch, in the
// reconnect loop a user writes around it (parser-follow.mjs), through cuts
// right after id lines and at random byte offsets: it emits an event only
// at its blank line, so the loop's last id is that of a whole frame, and
// every frame arrives once; the loop waits the stream's retry.
func TestRealClientEventSourceParserThroughCuts(t *testing.T) {
	t.Parallel()
	node := realclient.Node(t, realclient.ParserScript)
	plans := []struct {
		name  string
		seeds []uint64
		plan  func(uint64) cutproxy.Options
	}{
		{"mixed", rcParserSeeds, func(seed uint64) cutproxy.Options { return realclient.Cuts(seed, rcMaxCuts) }},
		{"bytes", rcParserBytes, func(seed uint64) cutproxy.Options { return realclient.ByteCuts(seed, rcMaxCuts, rcMaxBytes, false) }},
	}
	for _, p := range plans {
		for _, seed := range p.seeds {
			t.Run(fmt.Sprintf("cuts=%s/seed=%d", p.name, seed), func(t *testing.T) {
				t.Parallel()
				turn := realclient.Serve(t, rcKey("parser-"+p.name, seed),
					&realclient.Options{Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry, Proxy: p.plan(seed)})
				run := rcFollow(t, turn, node, realclient.ParserScript)
				var done rcParserDone
				run.Last(t, &done)
				require.Equal(t, int(rcRetry.Milliseconds()), done.Done.RetryMs, "the loop took the stream's retry")
				require.Equal(t, len(turn.Requests())-1, done.Done.CleanEnds+done.Done.Errors, "every request but the 204's ended, cleanly or not")
				realclient.RequireCutAndQuiet(t, turn.Proxy, p.name == "mixed", rcQuiet, func() int { return len(turn.Requests()) })
				t.Logf("%s; clean ends %d, errors %d", turn.Figures(len(run.Messages), run.Took), done.Done.CleanEnds, done.Done.Errors)
			})
		}
	}
}

// rcFetchDone is fetch-follow.mjs's summary line.
type rcFetchDone struct {
	Done struct {
		Exit      int  `json:"exit"`
		Opens     int  `json:"opens"`
		Empty     int  `json:"empty"`
		Errors    int  `json:"errors"`
		NoContent int  `json:"noContent"`
		Resolved  bool `json:"resolved"`
	} `json:"done"`
}

// fetch-event-source through cuts at random byte offsets, sparing the end
// of id lines (see the top of this file).
func TestRealClientFetchEventSourceThroughRandomByteCuts(t *testing.T) {
	t.Parallel()
	node := realclient.Node(t, realclient.FetchEventSourceScript)
	for _, seed := range rcFetchSeeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			turn := realclient.Serve(t, rcKey("fetch", seed), &realclient.Options{Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry,
				Proxy: realclient.ByteCuts(seed, rcMaxCuts, rcMaxBytes, true)})
			run := rcFollow(t, turn, node, realclient.FetchEventSourceScript)
			var done rcFetchDone
			run.Last(t, &done)
			require.Greater(t, done.Done.Opens, 1, "the package opened the stream more than once")
			realclient.RequireCutAndQuiet(t, turn.Proxy, false, rcQuiet, func() int { return len(turn.Requests()) })
			t.Log(turn.Figures(len(run.Messages), run.Took))
		})
	}
}

// fetch-event-source as its README's basic usage shows (onmessage alone,
// openWhenHidden under Node) through cuts at random byte offsets, sparing
// the end of id lines: a cut is an error, which it retries with the id it
// holds; the turn's clean end resolves its promise, and it stops there,
// having every frame once, without asking for the 204.
func TestRealClientFetchEventSourceBasicUsageThroughRandomByteCuts(t *testing.T) {
	t.Parallel()
	node := realclient.Node(t, realclient.FetchEventSourceBasicScript)
	for _, seed := range rcFetchBasic {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			turn := realclient.Serve(t, rcKey("fetch-basic", seed), &realclient.Options{Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry,
				Proxy: realclient.ByteCuts(seed, rcMaxCuts, rcMaxBytes, true)})
			run := rcFollowBasic(t, turn, node)
			realclient.RequireCutAndQuiet(t, turn.Proxy, false, rcQuiet, func() int { return len(turn.Requests()) })
			t.Log(turn.Figures(len(run.Messages), run.Took))
		})
	}
}

// fetch-event-source's basic usage at a 204, from a server that answers
// nothing else: its default onopen refuses the response (no event-stream
// content type) and, without onerror, it asks again after its retry
// interval (1s by default), for ever; the script gives up on the third.
func TestRealClientFetchEventSourceBasicUsageRetriesA204(t *testing.T) {
	t.Parallel()
	node := realclient.Node(t, realclient.FetchEventSourceBasicScript)
	var (
		mu    sync.Mutex
		asked []time.Time
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, time.Now())
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), rcTimeout+10*time.Second)
	defer cancel()
	run := realclient.FollowWithNode(ctx, t, node, realclient.FetchEventSourceBasicScript, srv.URL, rcTimeout)
	require.Equal(t, 4, run.Exit, "the script gave up on the third 204; stderr:\n%s", strings.Join(run.Lines, "\n"))
	var done rcFetchDone
	run.Last(t, &done)
	require.Equal(t, 3, done.Done.NoContent)
	require.False(t, done.Done.Resolved, "a 204 never resolves its promise")
	require.Empty(t, run.Messages)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, asked, 3, "it asked three times")
	for i := 1; i < len(asked); i++ {
		gap := asked[i].Sub(asked[i-1])
		require.GreaterOrEqual(t, gap, 900*time.Millisecond, "request %d waited its retry interval, a second", i+1)
		t.Logf("request %d after %s", i+1, gap.Round(time.Millisecond))
	}
}

// rcFollowBasic runs fetch-event-source's basic usage on turn's stream and
// checks that it got every frame once, resuming by Last-Event-ID, and
// ended as that usage ends: on the turn's clean end (its promise resolves;
// it never asks again, so never meets the 204), or, when a cut fell between
// the last frame and the clean end, retrying the 204 (the script gives up
// on the third).
func rcFollowBasic(t *testing.T, turn *realclient.Turn, node string) realclient.NodeRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), rcTimeout+10*time.Second)
	defer cancel()
	run := realclient.FollowWithNode(ctx, t, node, realclient.FetchEventSourceBasicScript, turn.StreamURL(), rcTimeout)
	var done rcFetchDone
	run.Last(t, &done)
	turn.RequireEveryFrameOnce(t, run.Messages)
	latest := strconv.Itoa(len(turn.Frames(t)))
	reqs := turn.Requests()
	switch run.Exit {
	case 0:
		require.True(t, done.Done.Resolved, "the promise resolved")
		require.Zero(t, done.Done.NoContent)
		t.Logf("the promise resolved on the turn's clean end")
		turn.RequireResumedWithLastEventID(t, false)
		for i, r := range reqs {
			require.NotEqual(t, latest, r.LastEventID, "request %d: no request after the end", i+1)
		}
	case 4:
		require.Equal(t, 3, done.Done.NoContent, "it retried the 204")
		turn.RequireResumedWithLastEventID(t, true)
		t.Logf("a cut fell between the last frame and the clean end: it retried the 204")
	default:
		t.Fatalf("exit %d; stderr:\n%s", run.Exit, strings.Join(run.Lines, "\n"))
	}
	return run
}

// fetch-event-source cut right after an id line, before the blank line:
// the one point no layout protects. In both usages of its README it loses
// that frame, and only it: it resumes with the id it read, and gets every
// other frame once.
func TestRealClientFetchEventSourceLosesTheFrameOfAnIDLineCut(t *testing.T) {
	t.Parallel()
	for _, script := range []string{realclient.FetchEventSourceScript, realclient.FetchEventSourceBasicScript} {
		t.Run(realclient.ScriptName(script), func(t *testing.T) {
			t.Parallel()
			node := realclient.Node(t, script)
			turn := realclient.Serve(t, rcKey("idline-"+realclient.ScriptName(script), 0), &realclient.Options{Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry,
				Proxy: cutproxy.Options{Arm: []byte("text/event-stream"), Plan: cutproxy.Fixed(cutproxy.Cut{IDLine: rcFetchIDLineCut})}})
			ctx, cancel := context.WithTimeout(t.Context(), rcTimeout+10*time.Second)
			defer cancel()
			run := realclient.FollowWithNode(ctx, t, node, script, turn.StreamURL(), rcTimeout)
			require.Equal(t, 0, run.Exit, "stderr:\n%s", strings.Join(run.Lines, "\n"))

			lost := strconv.Itoa(rcFetchIDLineCut) // the first connection starts at seq 1: its k-th id line is seq k's
			var want []realclient.Message
			for _, m := range turn.Frames(t) {
				if m.ID != lost {
					want = append(want, m)
				}
			}
			require.Equal(t, want, run.Messages, "every frame but %s, once each, in order", lost)
			reqs := turn.Requests()
			require.GreaterOrEqual(t, len(reqs), 2)
			require.Equal(t, lost, reqs[1].LastEventID, "it resumed with the id of the frame it never dispatched")
			require.Equal(t, cutproxy.Stats{Connections: turn.Proxy.Stats().Connections, Cuts: 1, CutsAtIDLine: 1}, turn.Proxy.Stats())
			t.Log(turn.Figures(len(run.Messages), run.Took))
		})
	}
}

// fetch-event-source's advanced usage on a turn that pauses, with a
// heartbeat every 50ms: it calls onmessage with an empty message, no id
// and no event name, for the blank line after each heartbeat comment,
// where the EventSource rules dispatch nothing. The script counts them;
// the frames still arrive once each.
func TestRealClientFetchEventSourceDispatchesAnEmptyMessagePerComment(t *testing.T) {
	t.Parallel()
	node := realclient.Node(t, realclient.FetchEventSourceScript)
	turn := realclient.Serve(t, rcKey("fetch-comments", 0), &realclient.Options{Deltas: 8, Pace: rcPace, Retry: rcRetry,
		HeartbeatInterval: 50 * time.Millisecond, PauseAfter: 5, PauseFor: 500 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), rcTimeout+10*time.Second)
	defer cancel()
	run := realclient.FollowWithNode(ctx, t, node, realclient.FetchEventSourceScript, turn.StreamURL(), rcTimeout)
	require.Equal(t, 0, run.Exit, "stderr:\n%s", strings.Join(run.Lines, "\n"))
	turn.RequireEveryFrameOnce(t, run.Messages)
	var done rcFetchDone
	run.Last(t, &done)
	require.GreaterOrEqual(t, done.Done.Empty, 3, "an empty message for each heartbeat of the pause")
	t.Logf("empty messages %d over a pause of 500ms with a heartbeat every 50ms", done.Done.Empty)
}

// The Node clients across a graceful shutdown mid-turn: the instance
// serving them shuts down (http.Server.Shutdown with Handler.Close
// registered, then Handler.Shutdown); its streams are aborted, never ended
// cleanly, so each client, fetch-event-source's basic usage too (for which
// a clean end is final), resumes on the second instance, over the same
// window, and gets every frame once.
func TestRealClientNodeClientsAcrossAGracefulShutdown(t *testing.T) {
	t.Parallel()
	for _, script := range []string{realclient.EventSourceScript, realclient.EventSource5Script, realclient.FetchEventSourceScript,
		realclient.FetchEventSourceBasicScript, realclient.ParserScript} {
		t.Run(realclient.ScriptName(script), func(t *testing.T) {
			t.Parallel()
			node := realclient.Node(t, script)
			turn := realclient.Serve(t, rcKey("shutdown-"+realclient.ScriptName(script), 0), &realclient.Options{
				Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry, Instances: 2, ShutdownAfter: rcShutdownAfter})
			var run realclient.NodeRun
			if script == realclient.FetchEventSourceBasicScript {
				run = rcFollowBasic(t, turn, node)
			} else {
				run = rcFollow(t, turn, node, script)
			}
			turn.RequireResumedOnSecond(t)
			t.Log(turn.Figures(len(run.Messages), run.Took))
		})
	}
}

// rcPageResult is what the browser page POSTs once its EventSource closed.
type rcPageResult struct {
	Messages []realclient.Message `json:"messages"`
	Opens    int                  `json:"opens"`
	Errors   int                  `json:"errors"`
}

// Chromium's own EventSource through cuts right after id lines and at
// random byte counts: it applies an id at dispatch, reconnects after a cut
// and after the turn's clean end, and stops on the 204.
func TestRealClientChromiumEventSourceThroughCuts(t *testing.T) {
	t.Parallel()
	bin := rcChromium(t)
	for _, seed := range rcChromiumSeeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			turn := realclient.Serve(t, rcKey("chromium", seed),
				&realclient.Options{Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry, Proxy: realclient.Cuts(seed, rcMaxCuts)})
			res, took := rcFollowChromium(t, turn, bin)
			require.Greater(t, res.Opens, 1, "the page's EventSource opened more than once")
			realclient.RequireCutAndQuiet(t, turn.Proxy, true, rcQuiet, func() int { return len(turn.Requests()) })
			t.Log(turn.Figures(len(res.Messages), took))
		})
	}
}

// Chromium's EventSource across a graceful shutdown mid-turn: the instance
// serving the page and its stream shuts down; the stream is aborted, so
// the EventSource resumes on the second instance with Last-Event-ID, gets
// every frame once and stops on the 204 after the end.
func TestRealClientChromiumEventSourceAcrossAGracefulShutdown(t *testing.T) {
	t.Parallel()
	bin := rcChromium(t)
	turn := realclient.Serve(t, rcKey("shutdown-chromium", 0), &realclient.Options{
		Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry, Instances: 2, ShutdownAfter: rcShutdownAfter})
	res, took := rcFollowChromium(t, turn, bin)
	require.Greater(t, res.Opens, 1, "the page's EventSource opened again after the shutdown")
	turn.RequireResumedOnSecond(t)
	t.Log(turn.Figures(len(res.Messages), took))
}

// rcFollowChromium opens the harness page on turn's stream in headless
// Chromium, waits for the result it posts once its EventSource is closed
// for good, and checks it: every frame once, resumed by Last-Event-ID, the
// last request the 204's.
func rcFollowChromium(t *testing.T, turn *realclient.Turn, bin string) (rcPageResult, time.Duration) {
	t.Helper()
	q := url.Values{"src": {realclient.Path(turn.Key)}, "result": {"/harness/result"}}
	start := time.Now()
	browser := rcStartChromium(t, bin, turn.Base+"/harness/page.html?"+q.Encode())
	var res rcPageResult
	select {
	case body := <-turn.Results:
		require.NoError(t, json.Unmarshal(body, &res), "the page posted %q", body)
	case <-browser.done:
		t.Fatalf("chromium exited before the page posted its result")
	case <-time.After(rcTimeout):
		t.Fatalf("the page posted no result in %s; stream requests: %d, proxy: %+v", rcTimeout, len(turn.Requests()), turn.Proxy.Stats())
	}
	took := time.Since(start)
	turn.RequireEveryFrameOnce(t, res.Messages)
	turn.RequireResumedWithLastEventID(t, true)
	return res, took
}
