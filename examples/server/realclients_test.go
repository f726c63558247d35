package main

import (
	"encoding/json"
	"net/http"
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
		Messages []struct{ ID, Role string }
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
	require.Greater(t, len(first.Events), 1)
	assert.Equal(t, "MESSAGES_SNAPSHOT", first.Events[1]["type"], "the thread's messages, right after RUN_STARTED")
	assert.Len(t, first.Events[1]["messages"], 1, "the run's user message")
	assert.Equal(t, v1.Turns[0].Text(), texts(first.Events))
	assert.Equal(t, "interrupt", first.Outcome["type"])
	assert.Regexp(t, "^card-", first.Outcome["interrupts"].([]any)[0].(map[string]any)["id"])
	require.Nil(t, second.Error)
	assert.Equal(t, "success", second.Outcome["type"])
	assert.Equal(t, "Glad it helped. ", texts(second.Events))
	require.Equal(t, "MESSAGES_SNAPSHOT", second.Events[1]["type"])
	var roles []string
	for _, m := range second.Events[1]["messages"].([]any) {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	assert.Equal(t, []string{"user", "assistant", "tool", "user"}, roles, "the first run's turn from the server's history, then the second run's")
	// The agent's messages: the snapshot's (the agent merges them with its
	// own by id, in its own order), then the second run's answer.
	turn1 := strings.TrimSuffix(second.Events[1]["messages"].([]any)[0].(map[string]any)["id"].(string), "-user")
	kept := map[string]string{}
	for _, m := range run.Messages {
		kept[m.ID] = m.Role
	}
	assert.Len(t, run.Messages, 5, "%+v", run.Messages)
	assert.Equal(t, "assistant", kept[turn1], "the first turn's answer under the turn's id, from the history")
	assert.Equal(t, "tool", kept[turn1+"-call-1-result"])
	assert.Equal(t, "user", kept[turn1+"-user"])
}

// uiMessage is a UIMessage as the ai package's Chat holds it.
type uiMessage struct {
	ID, Role string
	Parts    []map[string]any
}

// TestRealClientReloadShowsTheHistory: the npm ai package's Chat sends a
// message; the page reloads as the ai package's message-persistence
// recipe does, its new Chat's initial messages loaded from the ui-history
// URL, which shows the earlier turn (the user's question, the answer's
// text and tool call); that Chat then sends its last message only
// (prepareSendMessagesRequest), which starts the next turn.
func TestRealClientReloadShowsTheHistory(t *testing.T) {
	s := start(t, "-deltas", "16", "-pace", "2ms")
	v1, _ := follow(t, s.turns[0], nil)
	for _, line := range uiclients.Lines {
		t.Run("ai@"+line.Version, func(t *testing.T) {
			t.Parallel()
			chat := "reload-" + line.Package
			out := uiclients.Run(t, 60*time.Second, "uihistory.mjs", line.Package, s.endpoints["ui-message-stream"], s.endpoints["ui-history"], chat,
				`{"Authorization":"Bearer demo"}`)
			var run struct {
				Status               string
				Errors               []string
				First, Loaded, After []uiMessage
			}
			require.NoError(t, json.Unmarshal(out, &run), "%s", out)
			require.Equal(t, "ready", run.Status, "errors %v", run.Errors)
			require.Empty(t, run.Errors)
			require.Len(t, run.First, 2)
			turn1 := run.First[1].ID
			require.Len(t, run.Loaded, 2, "the earlier turn, from the server")
			assert.Equal(t, []string{turn1 + "-user", turn1}, []string{run.Loaded[0].ID, run.Loaded[1].ID})
			assert.Equal(t, "What is the refund policy?", run.Loaded[0].Parts[0]["text"])
			var text string
			var tool map[string]any
			for _, p := range run.Loaded[1].Parts {
				switch p["type"] {
				case "text":
					text += p["text"].(string)
				case "tool-search_docs":
					tool = p
				}
			}
			assert.Equal(t, v1.Turns[0].Text(), text)
			require.NotNil(t, tool)
			assert.Equal(t, "output-available", tool["state"])
			assert.Equal(t, map[string]any{"hits": float64(2)}, tool["output"])

			require.Len(t, run.After, 4)
			assert.Equal(t, "And for gift cards?", run.After[2].Parts[0]["text"])
			turn2 := run.After[3].ID
			assert.NotEqual(t, turn1, turn2, "the next turn, started by the last message alone")
			status, body := do(t, http.MethodGet, strings.Replace(s.endpoints["ui-history"], "{chatId}", chat, 1), "Bearer demo", "")
			require.Equal(t, http.StatusOK, status)
			var hist []uiMessage
			require.NoError(t, json.Unmarshal([]byte(body), &hist))
			require.Len(t, hist, 4)
			assert.Equal(t, turn2+"-user", hist[2].ID)
			assert.Equal(t, "And for gift cards?", hist[2].Parts[0]["text"])
		})
	}
}
