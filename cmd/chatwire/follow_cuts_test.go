package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/realclient"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// `chatwire follow` as the README and examples/server run it (the URL
// alone), on the real-client tests' turn (61 frames, one every 20ms, a
// retry of 100ms): through cuts right after id lines and at random byte
// counts, and across a graceful shutdown of the instance serving it. It
// prints what decode prints for the turn, every envelope once, and stops
// on the turn's terminal lifecycle frame (docs/contract.md section 14.4).
func TestFollowCommandThroughRandomCutsAndAGracefulShutdown(t *testing.T) {
	t.Parallel()
	const deltas, pace, retry, maxCuts = 56, 20 * time.Millisecond, 100 * time.Millisecond, 8
	runs := []struct {
		name string
		o    realclient.Options
	}{
		{"cuts=mixed/seed=71", realclient.Options{Proxy: realclient.Cuts(71, maxCuts)}},
		{"cuts=bytes/seed=72", realclient.Options{Proxy: realclient.ByteCuts(72, maxCuts, 2500, false)}},
		{"cuts=bytes/seed=73", realclient.Options{Proxy: realclient.ByteCuts(73, maxCuts, 2500, false)}},
		{"shutdown", realclient.Options{Instances: 2, ShutdownAfter: 20}},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			o := r.o
			o.Deltas, o.Pace, o.Retry = deltas, pace, retry
			turn := realclient.Serve(t, replay.Key{ConversationID: "c-follow", TurnID: "t-" + strings.ReplaceAll(r.name, "/", "-")}, &o)
			start := time.Now()
			code, stdout, stderr := runCmd([]string{"follow", turn.StreamURL()}, "")
			took := time.Since(start)
			require.Equal(t, exitOK, code, stderr)
			require.Empty(t, stderr)

			var file strings.Builder
			frames := turn.Frames(t)
			for _, f := range frames {
				fmt.Fprintf(&file, "data: %s\nid: %s\n\n", f.Data, f.ID)
			}
			_, want, _ := runCmd([]string{"decode"}, file.String())
			require.Equal(t, want, stdout, "every envelope once, in order")
			require.Equal(t, len(frames), strings.Count(stdout, "\n"))

			turn.RequireResumedWithLastEventID(t, false)
			if o.Instances == 2 {
				turn.RequireResumedOnSecond(t)
			} else {
				realclient.RequireCutAndQuiet(t, turn.Proxy, strings.Contains(r.name, "mixed"), time.Second, func() int { return len(turn.Requests()) })
			}
			t.Log(turn.Figures(len(frames), took))
		})
	}
}
