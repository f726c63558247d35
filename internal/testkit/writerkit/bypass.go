package writerkit

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// bypassInterval is the heartbeat interval of the bypass scenario: the
// stream idles for a few heartbeats between its frames.
const bypassInterval = 50 * time.Millisecond

// WrapperNeverBypassed checks that a middleware's wrapper that offers
// Flush and Unwrap but not Hijack (a [Counter]'s) sees every byte of the
// body, also once the stream caught up and idled: a handler takes a
// connection over only when the ResponseWriter it was given offers
// [http.Hijacker] itself, never through Unwrap, which would write past the
// wrapper. The bytes counted must be the bytes the client read.
func WrapperNeverBypassed(t *testing.T, s Subject) {
	window := replay.NewMemory(nil)
	turn := BeginTurn(t, window)
	h, closeHandler := s.New(t, window, Options{HeartbeatInterval: bypassInterval})
	var c Counter
	srv := Serve(t, c.Wrap(h), closeHandler)
	resp := Open(t, s, srv.URL)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body := ReadBody(resp.Body)
	body.AwaitText(t, FirstDelta, ShortWait, "the replayed frames")
	body.AwaitBeats(t, 3, ShortWait, "caught up, the stream idles")
	turn.Delta(t, LaterDelta)
	body.AwaitText(t, LaterDelta, ShortWait, "a frame after the idle time")
	body.AwaitBeats(t, len(body.Beats())+2, ShortWait, "the stream idles again")
	turn.Complete(t)
	ended, err := body.End(ShortWait)
	require.True(t, ended, "the stream ends with its turn")
	require.NoError(t, err, "a clean end")
	assert.Equal(t, body.Len(), c.Bytes(), "every byte the client read went through the middleware's wrapper")
}
