package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/uiclients"
)

// TestRealClientChatOnTheExample: the npm ai package's Chat with
// DefaultChatTransport, given the example's ui-message-stream URL and the
// demo caller's header, reads the turn its message starts: the version-1
// turn's text, the tool call and the open card.
func TestRealClientChatOnTheExample(t *testing.T) {
	s := start(t, "-deltas", "16", "-pace", "2ms")
	v1, _ := follow(t, s.turns[0], nil)
	for _, line := range uiclients.Lines {
		t.Run("ai@"+line.Version, func(t *testing.T) {
			t.Parallel()
			chat := "chat-" + line.Package
			out := uiclients.Run(t, 60*time.Second, "uichat.mjs", line.Package, s.endpoints["ui-message-stream"], chat, "send",
				`{"Authorization":"Bearer demo"}`)
			var run struct {
				Status   string
				Errors   []string
				Messages []struct {
					ID, Role string
					Parts    []map[string]any
				}
			}
			require.NoError(t, json.Unmarshal(out, &run), "%s", out)
			require.Equal(t, "ready", run.Status, "errors %v", run.Errors)
			require.Len(t, run.Messages, 2)
			m := run.Messages[1]
			require.NotEmpty(t, m.ID, "the turn's id")
			var text strings.Builder
			var tools, cards int
			for _, p := range m.Parts {
				switch p["type"] {
				case "text":
					text.WriteString(p["text"].(string))
				case "tool-search_docs":
					tools++
					assert.Equal(t, map[string]any{"q": "refund policy"}, p["input"])
					assert.Equal(t, map[string]any{"hits": float64(2)}, p["output"])
				case "data-card":
					cards++
					assert.Equal(t, "card-"+m.ID, p["id"])
					assert.Equal(t, "open", p["data"].(map[string]any)["status"])
				}
			}
			assert.Equal(t, v1.Turns[0].Text(), text.String())
			assert.Equal(t, 1, tools)
			assert.Equal(t, 1, cards)
			assert.Equal(t, 1, s.launches(chat, m.ID))
		})
	}
}

// TestRealClientHttpAgentOnTheExample: @ag-ui/client's HttpAgent, with its
// event verification, runs the example's AG-UI endpoint: the first run ends
// with the card's interrupt, and the next run's resume entry answers it, in
// a turn that closes the card and replies.
func TestRealClientHttpAgentOnTheExample(t *testing.T) {
	s := start(t, "-deltas", "16", "-pace", "2ms")
	v1, _ := follow(t, s.turns[0], nil)
	out := uiclients.Run(t, 60*time.Second, "agrun.mjs", s.endpoints["ag-ui"], "thread-1", `{"Authorization":"Bearer demo"}`, `{"optionId":"yes"}`)
	var run struct {
		Runs []struct {
			Events  []map[string]any
			Outcome map[string]any
			Error   *string
		}
	}
	require.NoError(t, json.Unmarshal(out, &run), "%s", out)
	require.Len(t, run.Runs, 2)
	texts := func(evs []map[string]any) string {
		var b strings.Builder
		for _, e := range evs {
			if e["type"] == "TEXT_MESSAGE_CONTENT" {
				b.WriteString(e["delta"].(string))
			}
		}
		return b.String()
	}
	first, second := run.Runs[0], run.Runs[1]
	require.Nil(t, first.Error)
	assert.Equal(t, v1.Turns[0].Text(), texts(first.Events))
	assert.Equal(t, "interrupt", first.Outcome["type"])
	assert.Regexp(t, "^card-", first.Outcome["interrupts"].([]any)[0].(map[string]any)["id"])
	require.Nil(t, second.Error)
	assert.Equal(t, "success", second.Outcome["type"])
	assert.Equal(t, "Glad it helped. ", texts(second.Events))
}
