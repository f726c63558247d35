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
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/uiclients"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// TestRealClientSchemaAcceptsEveryEvent: a turn holding every event type
// and tool result status, ending each way, streams events that @ag-ui/core
// 1.x's schemas accept, each member one they name (docs/contract.md
// section 18.2).
func TestRealClientSchemaAcceptsEveryEvent(t *testing.T) {
	ends := map[chatprotocol.LifecycleStatus]string{
		chatprotocol.LifecycleCompleted: "RUN_FINISHED",
		chatprotocol.LifecycleFailed:    "RUN_ERROR",
		chatprotocol.LifecycleCancelled: "RUN_FINISHED",
	}
	for end, last := range ends {
		t.Run(string(end), func(t *testing.T) {
			w := replay.NewMemory(nil)
			key := replay.Key{ConversationID: "thread-1", TurnID: "t-1"}
			for _, env := range turnscript.Envelopes(key, turnscript.Every(key, end)) {
				_, err := w.Append(context.Background(), key, env)
				require.NoError(t, err)
			}
			h, err := agui.NewHandler(w, &agui.HandlerOptions{
				StartRun: func(context.Context, *http.Request, *agui.RunInput) (replay.Key, error) { return key, nil },
			})
			require.NoError(t, err)
			srv := httptest.NewServer(h)
			defer srv.Close()
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(input))
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err)
			var out struct {
				Checked int
				Types   []string
				Errors  []string
			}
			require.NoError(t, json.Unmarshal(uiclients.RunWith(t, 30*time.Second, body, "schemas.mjs", "agui"), &out))
			assert.Empty(t, out.Errors)
			assert.Equal(t, "RUN_STARTED", out.Types[0])
			assert.Equal(t, last, out.Types[len(out.Types)-1])
			for _, typ := range []string{"TOOL_CALL_RESULT", "STATE_SNAPSHOT", "CUSTOM", "TEXT_MESSAGE_CONTENT", "STEP_STARTED", "STEP_FINISHED"} {
				assert.Contains(t, out.Types, typ)
			}
		})
	}
}
