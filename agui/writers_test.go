package agui_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/writerkit"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// The writer tests hold the bridge to the behaviour every protocol shares
// whatever writes its responses (internal/testkit/writerkit): aborts that
// Node's fetch reads as errors, a JSON 500 for a writer that cannot flush,
// a middleware's wrapper never bypassed, heartbeats on time while the
// window stalls.

// writerSubject is the bridge as the writer scenarios drive it: mounted at
// the root, every run it is posted streaming writerkit.Key's turn.
var writerSubject = writerkit.Subject{
	New: func(t testing.TB, window replay.Window, o writerkit.Options) (http.Handler, func()) {
		h, err := agui.NewHandler(window, &agui.HandlerOptions{
			StartRun: func(context.Context, *http.Request, *agui.RunInput) (replay.Key, error) {
				return writerkit.Key, nil
			},
			Options: serve.Options{HeartbeatInterval: o.HeartbeatInterval, WindowTimeout: o.WindowTimeout, WaitOnRequest: o.WaitOnRequest},
		})
		require.NoError(t, err)
		return h, h.Close
	},
	WaitOnRequest: true,
	Request: writerkit.Request{Method: http.MethodPost, Path: "/", ContentType: "application/json",
		Body: `{"threadId":"` + writerkit.Key.ConversationID + `","runId":"run-w","messages":[{"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`},
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
