package agui_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/losses"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// TestLossesTableHoldsForEveryMember: section 18.2's table of losses has a
// row for every member of the envelope and of each event type the
// version-1 schemas define, and the unknown members of each; every row
// holds of the events the bridge streams, which @ag-ui/core 1.x's schemas
// accept, each member one they name.
func TestLossesTableHoldsForEveryMember(t *testing.T) {
	losses.Check(t, bridge)
}

// bridge is the bridge as the losses kit drives it.
var bridge = losses.Bridge{Section: "18.2", Client: "agui", Path: "/", Body: input,
	Mount: func(t *testing.T, w replay.Window, key replay.Key) http.Handler {
		h, err := agui.NewHandler(w, &agui.HandlerOptions{
			StartRun: func(context.Context, *http.Request, *agui.RunInput) (replay.Key, error) { return key, nil },
			Registry: losses.Registry(t),
		})
		require.NoError(t, err)
		return h
	}}
