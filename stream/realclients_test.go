package stream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The real-client tests follow one turn's stream from the Handler with
// clients nobody here wrote, the npm eventsource package under Node and
// Chromium's own EventSource, through a proxy that cuts their connections
// at random points and right after id lines (docs/contract.md section 14).
// They need the clients installed (`bash .ci/clients`); without them they
// skip, unless CHATPROTOCOL_REAL_CLIENTS is set, as CI sets it.
const (
	rcDeltas  = 56                    // the scripted turn has 61 frames
	rcPace    = 20 * time.Millisecond // between two appended frames
	rcRetry   = 100 * time.Millisecond
	rcMaxCuts = 8
	rcTimeout = 45 * time.Second // for one client to follow the turn
	rcQuiet   = time.Second      // no connection after the end for this long
)

// The proxy's seeds, one run of the client each, in parallel.
var (
	rcNodeSeeds     = []uint64{1, 2, 3}
	rcChromiumSeeds = []uint64{4, 5}
)

// rcFigures logs a run's figures: frames, cuts, connections, requests.
func rcFigures(t *testing.T, turn *rcTurn, frames int, took time.Duration) {
	t.Helper()
	s := turn.Proxy.Stats()
	t.Logf("frames %d, cuts %d (%d right after an id line, %d after a byte count), connections %d, stream requests %d (%d while the turn was live), took %s",
		frames, s.Cuts, s.CutsAtIDLine, s.CutsAtBytes, s.Connections, len(turn.Requests()), turn.LiveRequests(), took.Round(time.Millisecond))
}

// requireCutAndQuiet checks that the proxy did cut, right after an id line
// at least once, that the client came back (more than one connection), and
// that it opens no connection and sends no request for rcQuiet after the end.
func (turn *rcTurn) requireCutAndQuiet(t *testing.T) {
	t.Helper()
	rcRequireCutAndQuiet(t, turn.Proxy, func() int { return len(turn.Requests()) })
}

// rcRequireCutAndQuiet checks proxy's figures as requireCutAndQuiet does;
// requests, when not nil, counts the stream requests the server got.
func rcRequireCutAndQuiet(t *testing.T, proxy *cutproxy.Proxy, requests func() int) {
	t.Helper()
	s := proxy.Stats()
	require.Positive(t, s.Cuts, "the proxy cut connections")
	require.Positive(t, s.CutsAtIDLine, "the proxy cut right after an id line")
	require.Greater(t, s.Connections, 1, "the client reconnected")
	var before int
	if requests != nil {
		before = requests()
	}
	time.Sleep(rcQuiet) // watching for something that must not happen
	require.Equal(t, s.Connections, proxy.Stats().Connections, "no connection after the end")
	if requests != nil {
		require.Equal(t, before, requests(), "no request after the end")
	}
}

func TestRealClientNodeEventSourceThroughCuts(t *testing.T) {
	t.Parallel()
	node := rcNode(t)
	for _, seed := range rcNodeSeeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			turn := rcServe(t, replay.Key{ConversationID: "c-real", TurnID: fmt.Sprintf("t-node-%d", seed)},
				rcTurnOptions{Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry, Proxy: rcCuts(seed, rcMaxCuts)})

			ctx, cancel := context.WithTimeout(t.Context(), rcTimeout+10*time.Second)
			defer cancel()
			run := rcFollowWithNode(ctx, t, node, turn.StreamURL(), rcTimeout)
			require.Equal(t, 0, run.Exit, "follow.mjs exits 0 on the 204 after the end; its error events:\n%s", strings.Join(run.Errors, "\n"))
			require.Contains(t, run.Errors[len(run.Errors)-1], `"code":204`, "the last error event is the 204")

			turn.requireEveryFrameOnce(t, run.Messages)
			turn.requireResumedWithLastEventID(t)
			turn.requireCutAndQuiet(t)
			rcFigures(t, turn, len(run.Messages), run.Took)
		})
	}
}

// rcPageResult is what the browser page POSTs once its EventSource closed.
type rcPageResult struct {
	Messages []rcMessage `json:"messages"`
	Opens    int         `json:"opens"`
	Errors   int         `json:"errors"`
}

func TestRealClientChromiumEventSourceThroughCuts(t *testing.T) {
	t.Parallel()
	bin := rcChromium(t)
	for _, seed := range rcChromiumSeeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			t.Parallel()
			turn := rcServe(t, replay.Key{ConversationID: "c-real", TurnID: fmt.Sprintf("t-chromium-%d", seed)},
				rcTurnOptions{Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry, Proxy: rcCuts(seed, rcMaxCuts)})

			q := url.Values{"src": {path(turn.Key)}, "result": {"/harness/result"}}
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

			turn.requireEveryFrameOnce(t, res.Messages)
			turn.requireResumedWithLastEventID(t)
			require.Greater(t, res.Opens, 1, "the page's EventSource opened more than once")
			turn.requireCutAndQuiet(t)
			rcFigures(t, turn, len(res.Messages), took)
		})
	}
}
