package writerkit

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// The timing of the stall scenario: heartbeats every stallInterval, a
// window timeout far longer, a stall of stallFor; the slack allows for a
// loaded machine and the race detector.
const (
	stallInterval      = 100 * time.Millisecond
	stallWindowTimeout = 4 * time.Second
	stallFor           = 3 * time.Second
	stallMaxGap        = 1500 * time.Millisecond
)

// HeartbeatsDuringStall checks that a live stream keeps sending heartbeat
// comments at its heartbeat interval while its window's store stalls
// (docs/contract.md section 14.2): with HeartbeatInterval 50ms and
// WindowTimeout 1s, a frame is appended once the stream is live and every
// Read stalls ([StallingWindow]); for 2s the client must get its first
// heartbeat within 400ms and none more than 400ms after the previous one.
// Once the store answers again the stream delivers the frame and ends with
// its turn. It runs bare, and with WaitOnRequest when s has it.
func HeartbeatsDuringStall(t *testing.T, s Subject) {
	modes := []Mode{{Name: "bare"}}
	if s.WaitOnRequest {
		modes = append(modes, Mode{Name: "wait-on-request", Options: Options{WaitOnRequest: true}})
	}
	for _, m := range modes {
		t.Run(m.Name, func(t *testing.T) {
			t.Parallel()
			window := NewStallingWindow(replay.NewMemory(nil))
			turn := BeginTurn(t, window)
			opts := m.Options
			opts.HeartbeatInterval, opts.WindowTimeout = stallInterval, stallWindowTimeout
			h, closeHandler := s.New(t, window, opts)
			srv := Serve(t, h, closeHandler)
			resp := Open(t, s, srv.URL)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			body := ReadBody(resp.Body)
			body.AwaitText(t, FirstDelta, ShortWait, "the replayed frames")
			body.AwaitBeats(t, 2, ShortWait, "caught up, the stream idles")

			window.Stall()
			start := time.Now()
			turn.Delta(t, LaterDelta) // wakes the stream, whose Read stalls
			body.Await(stallFor, func([]byte, []time.Time) bool { return false })
			end := time.Now()
			during := body.Text()
			window.Release()

			assert.Positive(t, window.Stalled(), "the stream read the stalled window")
			assert.NotContains(t, during, LaterDelta, "the stalled window gave nothing")
			var beats []time.Time
			for _, b := range body.Beats() {
				if !b.Before(start) && !b.After(end) {
					beats = append(beats, b)
				}
			}
			gaps, worst := heartbeatGaps(start, end, beats)
			assert.NotEmpty(t, beats, "heartbeats during the %v stall", stallFor)
			if len(beats) > 0 {
				assert.LessOrEqual(t, beats[0].Sub(start), stallMaxGap, "the first heartbeat of the stall comes within %v; gaps %s", stallMaxGap, gaps)
			}
			assert.LessOrEqual(t, worst, stallMaxGap, "no gap between heartbeats over %v during the stall (interval %v, window timeout %v); gaps %s",
				stallMaxGap, stallInterval, stallWindowTimeout, gaps)

			body.AwaitText(t, LaterDelta, ShortWait, "the frame appended during the stall, once the store answers")
			turn.Complete(t)
			ended, err := body.End(ShortWait)
			require.True(t, ended, "the stream ends with its turn")
			require.NoError(t, err, "a clean end")
		})
	}
}

// heartbeatGaps returns the gaps from start to the first beat, between
// beats, and from the last to end, as text in milliseconds, and the
// longest.
func heartbeatGaps(start, end time.Time, beats []time.Time) (string, time.Duration) {
	var b strings.Builder
	var worst time.Duration
	prev := start
	for _, at := range append(beats[:len(beats):len(beats)], end) {
		gap := at.Sub(prev)
		worst = max(worst, gap)
		fmt.Fprintf(&b, "%dms ", gap.Milliseconds())
		prev = at
	}
	return strings.TrimSpace(b.String()), worst
}
