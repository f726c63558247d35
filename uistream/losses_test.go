package uistream_test

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
	"github.com/Papercusp/chat-protocol-go/internal/testkit/losses"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/uiclients"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// TestLossesTableHoldsForEveryMember: section 18.1's table of losses has a
// row for every member of the envelope and of each event type the
// version-1 schemas define, and the unknown members of each; every row
// holds of the chunks the bridge streams, which the chunk schemas of ai 7,
// 6 and 5.x accept.
func TestLossesTableHoldsForEveryMember(t *testing.T) {
	losses.Check(t, losses.Bridge{Section: "18.1", Serve: serveTurn, Validate: func(t *testing.T, body []byte) {
		var out struct {
			Checked int
			Errors  []string
		}
		require.NoError(t, json.Unmarshal(uiclients.RunWith(t, 60*time.Second, body, "schemas.mjs", "ui"), &out))
		assert.Empty(t, out.Errors)
		assert.Positive(t, out.Checked)
	}})
}

// serveTurn streams turn, the only turn of a new window, as the response
// to a POST, and returns the response's body.
func serveTurn(t *testing.T, turn []*chatprotocol.ChatEventEnvelope) []byte {
	t.Helper()
	w := replay.NewMemory(nil)
	key := replay.Key{ConversationID: turn[0].ConversationID, TurnID: turn[0].TurnID}
	for _, env := range turn {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
	h, err := uistream.NewHandler(w, &uistream.HandlerOptions{
		StartTurn:  func(context.Context, *http.Request, *uistream.Request) (replay.Key, error) { return key, nil },
		ActiveTurn: func(context.Context, *http.Request, string) (replay.Key, bool, error) { return key, true, nil },
	})
	require.NoError(t, err)
	mux := http.NewServeMux()
	h.Register(mux, "/api/chat")
	srv := httptest.NewServer(mux)
	defer srv.Close()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(submit))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return body
}
