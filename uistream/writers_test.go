package uistream_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/writerkit"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// The writer tests hold the bridge to the behaviour every protocol shares
// whatever writes its responses (internal/testkit/writerkit): aborts that
// Node's fetch reads as errors, a JSON 500 for a writer that cannot flush,
// a middleware's wrapper never bypassed, heartbeats on time while the
// window stalls.

// writerSubject is the bridge as the writer scenarios drive it: registered
// at /api/chat, every POST starting writerkit.Key's turn, which is also
// every chat's running turn.
var writerSubject = writerkit.Subject{
	New: func(t testing.TB, window replay.Window, o writerkit.Options) (http.Handler, func()) {
		h, err := uistream.NewHandler(window, &uistream.HandlerOptions{
			StartTurn: func(context.Context, *http.Request, *uistream.Request) (replay.Key, error) {
				return writerkit.Key, nil
			},
			ActiveTurn: func(context.Context, *http.Request, string) (replay.Key, bool, error) {
				return writerkit.Key, true, nil
			},
			Options: serve.Options{HeartbeatInterval: o.HeartbeatInterval, WindowTimeout: o.WindowTimeout, WaitOnRequest: o.WaitOnRequest},
		})
		require.NoError(t, err)
		mux := http.NewServeMux()
		h.Register(mux, "/api/chat")
		return mux, h.Close
	},
	WaitOnRequest: true,
	Request: writerkit.Request{Method: http.MethodPost, Path: "/api/chat", ContentType: "application/json",
		Body: `{"id":"` + writerkit.Key.ConversationID + `","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"hi"}]}],"trigger":"submit-message"}`},
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
