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
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/uiclients"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// TestRealClientSchemasAcceptEveryChunk: a turn holding every event type
// and tool result status, ending each way, streams chunks that the chunk
// schemas of ai 7, 6 and 5.x accept (docs/contract.md section 18.1).
func TestRealClientSchemasAcceptEveryChunk(t *testing.T) {
	ends := map[chatprotocol.LifecycleStatus][]string{
		chatprotocol.LifecycleCompleted: {"finish-step", "finish"},
		chatprotocol.LifecycleFailed:    {"error"},
		chatprotocol.LifecycleCancelled: {"abort"},
	}
	for end, last := range ends {
		t.Run(string(end), func(t *testing.T) {
			w := replay.NewMemory(nil)
			key := replay.Key{ConversationID: "chat-1", TurnID: "t-1"}
			for _, env := range turnscript.Envelopes(key, turnscript.Every(key, end)) {
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
			resp, err := http.Post(srv.URL+"/api/chat", "application/json", strings.NewReader(submit))
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			var out struct {
				Checked int
				Types   []string
				Errors  []string
			}
			require.NoError(t, json.Unmarshal(uiclients.RunWith(t, 30*time.Second, body, "schemas.mjs", "ui"), &out))
			assert.Empty(t, out.Errors)
			assert.Equal(t, last, out.Types[len(out.Types)-len(last):], "%v", out.Types)
			for _, typ := range []string{"start", "start-step", "finish-step", "text-delta", "tool-input-available", "tool-output-error", "tool-output-available", "data-card"} {
				assert.Contains(t, out.Types, typ)
			}
			assert.True(t, strings.HasSuffix(string(body), "data: [DONE]\n\n"))
			assert.Contains(t, string(body), `data: {"type":"data-card","id":"`+turnscript.EarlierCard+`","data":{"status":"closed","card":null,"outcome":"expired"}}`+"\n\n",
				"a card the turn never saw open closes with card null, which the schemas accept")
		})
	}
}
