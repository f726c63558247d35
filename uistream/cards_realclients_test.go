package uistream_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/uiclients"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// rcCards is what uicards.mjs printed.
type rcCards struct {
	rcRun
	Snapshots [][]struct {
		ID    string
		Role  string
		Parts []map[string]any
	}
}

func rcCardsRun(t *testing.T, pkg, api, mode string) rcCards {
	t.Helper()
	out := uiclients.Run(t, 60*time.Second, "uicards.mjs", pkg, api, "chat-1", mode, `{"X-User":"alice"}`)
	var run rcCards
	require.NoError(t, json.Unmarshal(out, &run), string(out))
	require.Empty(t, run.Errors, "error %v", run.Error)
	require.Equal(t, "ready", run.Status)
	return run
}

// partsOf returns the parts of type typ among parts.
func partsOf(parts []map[string]any, typ string) []map[string]any {
	var out []map[string]any
	for _, p := range parts {
		if p["type"] == typ {
			out = append(out, p)
		}
	}
	return out
}

// The tests of this file run their clients one at a time, before the
// parallel tests, whose resumes after a cut are sensitive to timing.

// TestRealClientAnswersCardsInItsOwnShapes: ai 7 and 6's Chat, under
// CardsTools, approves the confirm card's tool approval request with
// addToolApprovalResponse and answers the next card, a client-side tool
// call, with addToolOutput, both sent by sendAutomaticallyWhen with no
// body member of the module's: each lands through the Resolver as alice,
// the turns go on in the one assistant message, and sending the same
// messages again starts no turn and adds no message.
func TestRealClientAnswersCardsInItsOwnShapes(t *testing.T) {
	for _, line := range uiclients.Lines {
		if strings.HasPrefix(line.Version, "5.") {
			continue // no tool approvals before 6.0
		}
		t.Run("ai@"+line.Version, func(t *testing.T) {
			h := newCardHost(t, uistream.CardsTools)
			run := rcCardsRun(t, line.Package, h.srv.URL+"/api/chat", "tools")
			assert.Equal(t, 3, h.turns(), "the repeated send started a turn")
			assert.Equal(t, interactions.StatusAnswered, h.status(t, "card-t-1"))
			assert.Equal(t, interactions.StatusAnswered, h.status(t, "card-t-2"))
			assert.Equal(t, "t-1", h.request(2).Continues)
			require.Len(t, h.request(2).ToolAnswers, 1)
			assert.JSONEq(t, `{"approved":true}`, string(h.request(2).ToolAnswers[0].Result.Record.Answer.Value))
			third := h.request(3).ToolAnswers
			require.Len(t, third, 2, "the message holds both cards' parts")
			assert.True(t, third[0].Repeated)
			assert.False(t, third[1].Repeated)
			assert.JSONEq(t, `{"optionId":"yes"}`, string(third[1].Result.Record.Answer.Value))

			require.Len(t, run.Messages, 2)
			m := run.Messages[1]
			assert.Equal(t, "t-1", m.ID)
			tools := partsOf(m.Parts, "tool-card")
			require.Len(t, tools, 2)
			assert.Equal(t, "card-t-1", tools[0]["toolCallId"])
			assert.Equal(t, "output-available", tools[0]["state"])
			assert.Equal(t, map[string]any{"approved": true}, tools[0]["output"])
			assert.Equal(t, true, tools[0]["approval"].(map[string]any)["approved"])
			assert.Equal(t, "Refund $20?", tools[0]["input"].(map[string]any)["prompt"])
			assert.Equal(t, "card-t-2", tools[1]["toolCallId"])
			assert.Equal(t, "output-available", tools[1]["state"])
			assert.Equal(t, map[string]any{"optionId": "yes"}, tools[1]["output"])
			assert.Equal(t, turnscript.CardPrompt, tools[1]["input"].(map[string]any)["prompt"])
			var texts []string
			for _, p := range partsOf(m.Parts, "text") {
				texts = append(texts, p["text"].(string))
			}
			assert.Equal(t, []string{"I can refund $20.", "Refunded. ", "Thanks."}, texts)
			assert.Empty(t, partsOf(m.Parts, "data-card"))
			require.Len(t, run.Snapshots, 4)
			assert.Len(t, run.Snapshots[3], 2, "the repeat added a message")
		})
	}
}

// TestRealClientUpdatesTheCardPartInPlace: ai 5's Chat, under
// CardsInPlace, answers the card with sendMessage() and the answer
// member: the card's data-card part is updated in place, closed with its
// card, and the next turn's text follows in the same message; the same
// answer again starts no turn and changes nothing.
func TestRealClientUpdatesTheCardPartInPlace(t *testing.T) {
	for _, line := range uiclients.Lines {
		if !strings.HasPrefix(line.Version, "5.") {
			continue
		}
		t.Run("ai@"+line.Version, func(t *testing.T) {
			h := newCardHost(t, uistream.CardsInPlace)
			run := rcCardsRun(t, line.Package, h.srv.URL+"/api/chat", "inplace")
			assert.Equal(t, 2, h.turns(), "the repeated answer started a turn")
			assert.Equal(t, interactions.StatusAnswered, h.status(t, "card-t-1"))
			require.Len(t, run.Messages, 2)
			m := run.Messages[1]
			assert.Equal(t, "t-1", m.ID)
			parts := partsOf(m.Parts, "data-card")
			require.Len(t, parts, 1, "%v", m.Parts)
			assert.Equal(t, "card-t-1", parts[0]["id"])
			data := parts[0]["data"].(map[string]any)
			assert.Equal(t, "closed", data["status"])
			assert.Equal(t, "answered", data["outcome"])
			assert.Equal(t, turnscript.CardPrompt, data["card"].(map[string]any)["prompt"])
			var texts []string
			for _, p := range partsOf(m.Parts, "text") {
				texts = append(texts, p["text"].(string))
			}
			assert.Equal(t, []string{"Refunded. ", "Thanks."}, texts)
			require.Len(t, run.Snapshots, 3)
			assert.Equal(t, run.Snapshots[1], run.Snapshots[2], "the repeated answer changed the messages")
		})
	}
}
