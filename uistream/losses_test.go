package uistream_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/losses"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// TestLossesTableHoldsForEveryMember: section 18.1's table of losses has a
// row for every member of the envelope and of each event type the
// version-1 schemas define, and the unknown members of each; every row
// holds of the chunks the bridge streams, which the chunk schemas of ai 7,
// 6 and 5.x accept.
func TestLossesTableHoldsForEveryMember(t *testing.T) {
	losses.Check(t, bridge)
}

// bridge is the bridge as the losses kit drives it.
var bridge = losses.Bridge{Section: "18.1", Client: "ui", Path: "/api/chat", Body: submit,
	Mount: func(t *testing.T, w replay.Window, key replay.Key) http.Handler {
		h, err := uistream.NewHandler(w, &uistream.HandlerOptions{
			StartTurn:  func(context.Context, *http.Request, *uistream.Request) (replay.Key, error) { return key, nil },
			ActiveTurn: func(context.Context, *http.Request, string) (replay.Key, bool, error) { return key, true, nil },
			Registry:   losses.Registry(t),
		})
		require.NoError(t, err)
		mux := http.NewServeMux()
		h.Register(mux, "/api/chat")
		return mux
	}}
