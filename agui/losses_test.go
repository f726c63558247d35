package agui_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/losses"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/uiclients"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// TestLossesTableHoldsForEveryMember: section 18.2's table of losses has a
// row for every member of the envelope and of each event type the
// version-1 schemas define, and the unknown members of each; every row
// holds of the events the bridge streams, which @ag-ui/core 1.x's schemas
// accept, each member one they name.
func TestLossesTableHoldsForEveryMember(t *testing.T) {
	losses.Check(t, losses.Bridge{Section: "18.2", Serve: serveTurn, Validate: func(t *testing.T, body []byte) {
		var out struct {
			Checked int
			Errors  []string
		}
		require.NoError(t, json.Unmarshal(uiclients.RunWith(t, 60*time.Second, body, "schemas.mjs", "agui"), &out))
		assert.Empty(t, out.Errors)
		assert.Positive(t, out.Checked)
	}})
}

// serveTurn streams turn, the only turn of a new window, as the run a
// POST starts, and returns the response's body.
func serveTurn(t *testing.T, turn []*chatprotocol.ChatEventEnvelope) []byte {
	t.Helper()
	w := replay.NewMemory(nil)
	key := replay.Key{ConversationID: turn[0].ConversationID, TurnID: turn[0].TurnID}
	for _, env := range turn {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
	h, err := agui.NewHandler(w, &agui.HandlerOptions{
		StartRun: func(context.Context, *http.Request, *agui.RunInput) (replay.Key, error) { return key, nil },
	})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post(srv.URL, "application/json", strings.NewReader(input))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return body
}
