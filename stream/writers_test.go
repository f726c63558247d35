package stream_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/writerkit"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// The writer tests hold the Handler to the behaviour every protocol shares
// whatever writes its responses (internal/testkit/writerkit): aborts that
// Node's fetch reads as errors, a JSON 500 for a writer that cannot flush,
// a middleware's wrapper never bypassed, heartbeats on time while the
// window stalls.

// writerSubject is the Handler as the writer scenarios drive it: mounted
// on pattern, every caller allowed to read writerkit.Key's turn, a GET of
// its path.
var writerSubject = writerkit.Subject{
	New: func(t testing.TB, window replay.Window, o writerkit.Options) (http.Handler, func()) {
		h, err := stream.NewHandler(window, &stream.HandlerOptions{
			Authorize: func(*http.Request, replay.Key) error { return nil },
			Options:   serve.Options{HeartbeatInterval: o.HeartbeatInterval, WindowTimeout: o.WindowTimeout, WaitOnRequest: o.WaitOnRequest},
		})
		require.NoError(t, err)
		return mux(h), h.Close
	},
	Request:       writerkit.Request{Method: http.MethodGet, Path: path(writerkit.Key)},
	WaitOnRequest: true,
}

func TestWritersRealClientNodeFetchReadsAnAbortAsAnError(t *testing.T) {
	writerkit.FetchAborts(t, writerSubject)
}

func TestWritersNonFlushingWriterGetsJSON500(t *testing.T) {
	writerkit.NonFlushingWriters(t, writerSubject)
}

func TestWritersWrapperIsNeverBypassed(t *testing.T) {
	writerkit.WrapperNeverBypassed(t, writerSubject)
}

func TestWritersHeartbeatsOnTimeWhileTheWindowStalls(t *testing.T) {
	writerkit.HeartbeatsDuringStall(t, writerSubject)
}
