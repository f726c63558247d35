package realclients

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/gzhttp"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/realclient"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// The compressed turn pauses after this seq for rcPauseFor, with heartbeats
// every rcCompressedBeat meanwhile: the client catches up and idles, then
// the turn is live again.
const (
	rcPauseAfter     = int64(20)
	rcPauseFor       = 2 * time.Second
	rcCompressedBeat = 250 * time.Millisecond
)

// gzipped wraps h in gzhttp's GzipHandler with its default options: gzip
// and zstd, zstd preferred when a client accepts both, a body compressed
// once it reaches 1 KiB or is flushed. Under its wrapper the Handler never
// takes a connection over: each stream waits on its request's goroutine
// and writes through the wrapper, whose Flush flushes the compressor.
func gzipped(h http.Handler) http.Handler { return gzhttp.GzipHandler(h) }

// A real compression middleware in front of the Handler: go-sse follows a
// live turn that pauses (the stream catches up and idles, with heartbeats)
// then goes on, decoding gzip (net/http's transport asks for gzip and
// decodes it) or zstd (gzhttp's own transport asks for zstd and gzip, and
// the middleware prefers zstd). Every frame arrives once, and the last
// frame before the pause arrives during the pause: the compressor holds
// nothing back. With cuts at random byte offsets of the compressed body,
// the decoder fails at the cut and go-sse resumes.
func TestRealClientGoSSEThroughACompressionMiddleware(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		decoder  func(http.RoundTripper) http.RoundTripper // nil: net/http's own gzip
		encoding string                                    // the coding the responses come in
		cuts     bool
	}{
		{"gzip", nil, "gzip", false},
		{"zstd", zstdDecoder, "zstd", false},
		{"gzip-cuts", nil, "gzip", true},
		{"zstd-cuts", zstdDecoder, "zstd", true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := &realclient.Options{Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry, Wrap: gzipped,
				HeartbeatInterval: rcCompressedBeat, PauseAfter: rcPauseAfter, PauseFor: rcPauseFor}
			if c.cuts {
				o.Proxy = realclient.ByteCuts(uint64(50+i), 4, 1200, false)
			}
			turn := realclient.Serve(t, rcKey("gzhttp-"+c.name, 0), o)
			ctx, cancel := context.WithTimeout(t.Context(), rcTimeout)
			defer cancel()
			codings := &codings{next: http.DefaultTransport.(*http.Transport).Clone()}
			var rt http.RoundTripper = codings
			if c.decoder != nil {
				rt = c.decoder(codings)
			}
			rec := newConns(rt)
			r := followGoSSE(ctx, t, turn.StreamURL(), rec)
			require.ErrorIs(t, r.Err, errTurnEnded)
			turn.RequireEveryFrameOnce(t, r.Messages)
			turn.RequireResumedWithLastEventID(t, true)

			require.Contains(t, turn.Requests()[0].AcceptEncoding, c.encoding)
			rec.mu.Lock()
			require.True(t, rec.uncompressed[0], "the first response was decoded (by net/http's transport: from gzip, the one coding it decodes)")
			rec.mu.Unlock()
			if c.decoder != nil {
				codings.mu.Lock()
				require.Equal(t, c.encoding, codings.seen[0], "the first response's content coding")
				codings.mu.Unlock()
			}
			if !c.cuts {
				resumed := turn.AppendedAt(rcPauseAfter + 1)
				got := r.At[rcPauseAfter-1]
				require.True(t, got.Before(resumed), "frame %d arrived during the pause, %s before the turn went on", rcPauseAfter, resumed.Sub(got))
			} else {
				require.Positive(t, turn.Proxy.Stats().Cuts)
			}
			t.Logf("%s, reconnects %d", turn.Figures(len(r.Messages), r.Took), r.Retries)
		})
	}
}

// The raw bytes through the compression middleware, decoded by net/http's
// transport: heartbeat comments flow while the turn is idle, and the
// turn's end is a clean end of the compressed body (the gzip trailer, then
// the last chunk), read as io.EOF.
func TestCompressedStreamHeartbeatsWhileIdleAndEndsCleanly(t *testing.T) {
	t.Parallel()
	turn := realclient.Serve(t, rcKey("gzhttp-raw", 0), &realclient.Options{Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry,
		Wrap: gzipped, HeartbeatInterval: rcCompressedBeat, PauseAfter: rcPauseAfter, PauseFor: rcPauseFor})
	ctx, cancel := context.WithTimeout(t.Context(), rcTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, turn.StreamURL(), nil)
	require.NoError(t, err)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.True(t, res.Uncompressed, "the body came gzip-encoded and was decoded")

	d := sse.NewDecoder(res.Body, nil)
	var msgs []realclient.Message
	idle := 0 // heartbeat comments between the frame before the pause and the one after
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err, "the body ends cleanly")
		switch {
		case ev.Comment:
			if int64(len(msgs)) == rcPauseAfter {
				idle++
			}
		case ev.Type == sse.EventHeartbeat:
		default:
			msgs = append(msgs, realclient.Message{ID: ev.LastEventID, Event: ev.Type, Data: string(ev.Data)})
		}
	}
	turn.RequireEveryFrameOnce(t, msgs)
	want := int(rcPauseFor/rcCompressedBeat) / 2 // half of them: a loaded machine delays some
	require.GreaterOrEqual(t, idle, want, "heartbeats every %s during a pause of %s", rcCompressedBeat, rcPauseFor)
	t.Logf("frames %d, heartbeat comments during the pause %d", len(msgs), idle)
}

// codings records the Content-Encoding of every response, under the
// client's decoder (net/http's transport decodes gzip below it).
type codings struct {
	next http.RoundTripper
	mu   sync.Mutex
	seen []string
}

// RoundTrip records the response's content coding.
func (c *codings) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := c.next.RoundTrip(req)
	if err == nil {
		c.mu.Lock()
		c.seen = append(c.seen, res.Header.Get("Content-Encoding"))
		c.mu.Unlock()
	}
	return res, err
}

// zstdDecoder is gzhttp's client transport over next, with its default
// options: it asks for zstd and gzip, and decodes either.
func zstdDecoder(next http.RoundTripper) http.RoundTripper { return gzhttp.Transport(next) }

// The Node clients through the compression middleware: Node's fetch asks
// for gzip (and deflate) and decodes it; both clients follow the turn
// through its pause and get every frame once. fetch-event-source calls its
// onmessage with an empty message for each heartbeat comment (the harness
// drops and counts them): the pause's heartbeats show it.
func TestRealClientNodeClientsThroughACompressionMiddleware(t *testing.T) {
	t.Parallel()
	for _, script := range []string{realclient.EventSourceScript, realclient.FetchEventSourceScript} {
		t.Run(script, func(t *testing.T) {
			t.Parallel()
			node := realclient.Node(t, script)
			turn := realclient.Serve(t, rcKey("gzhttp-node-"+strings.TrimSuffix(script, ".mjs"), 0), &realclient.Options{
				Deltas: rcDeltas, Pace: rcPace, Retry: rcRetry, Wrap: gzipped,
				HeartbeatInterval: rcCompressedBeat, PauseAfter: rcPauseAfter, PauseFor: rcPauseFor})
			ctx, cancel := context.WithTimeout(t.Context(), rcTimeout+10*time.Second)
			defer cancel()
			run := realclient.FollowWithNode(ctx, t, node, script, turn.StreamURL(), rcTimeout)
			require.Equal(t, 0, run.Exit, "%s exits 0 on the 204 after the end; its stderr:\n%s", script, strings.Join(run.Lines, "\n"))
			turn.RequireEveryFrameOnce(t, run.Messages)
			require.Contains(t, turn.Requests()[0].AcceptEncoding, "gzip")
			if script == realclient.FetchEventSourceScript {
				var done struct {
					Done struct{ Empty int } `json:"done"`
				}
				run.Last(t, &done)
				require.GreaterOrEqual(t, done.Done.Empty, int(rcPauseFor/rcCompressedBeat)/2, "an empty message per heartbeat comment")
			}
			t.Logf("%s; stderr: %s", turn.Figures(len(run.Messages), run.Took), strings.Join(run.Lines, " "))
		})
	}
}
