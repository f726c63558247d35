package uistream_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnhost"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/uiclients"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// rcRun is what uichat.mjs printed: the Chat's status and messages, and
// the reloaded Chat's of the modes stop and abort.
type rcRun struct {
	rcChatState
	Errors []string
	Reload *rcChatState
}

// rcChatState is one Chat's status and messages.
type rcChatState struct {
	Status   string
	Error    *string
	Messages []rcMessage
}

// rcMessage is a UIMessage.
type rcMessage struct {
	ID    string
	Role  string
	Parts []map[string]any
}

// text is the message's text parts, joined.
func (m rcMessage) text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p["type"] == "text" {
			b.WriteString(p["text"].(string))
		}
	}
	return b.String()
}

func rcChat(t *testing.T, pkg, api, chat, mode string, headers ...string) rcRun {
	t.Helper()
	out := uiclients.Run(t, 60*time.Second, "uichat.mjs", append([]string{pkg, api, chat, mode}, headers...)...)
	var run rcRun
	require.NoError(t, json.Unmarshal(out, &run), string(out))
	return run
}

// requireWhole checks that the Chat holds the user's message and the
// assistant message of turn whole and once: its id, both texts, the tool
// part with the script's input and output, the card when card.
func requireWhole(t *testing.T, run rcRun, turn string, card bool) {
	t.Helper()
	require.Equal(t, "ready", run.Status, "error %v, errors %v", run.Error, run.Errors)
	require.Len(t, run.Messages, 2)
	m := run.Messages[1]
	assert.Equal(t, "assistant", m.Role)
	assert.Equal(t, turn, m.ID)
	var texts []string
	var tools, cards int
	for _, p := range m.Parts {
		switch typ := p["type"].(string); {
		case typ == "text":
			texts = append(texts, p["text"].(string))
			assert.Equal(t, "done", p["state"])
		case typ == "tool-"+turnscript.ToolName:
			tools++
			assert.Equal(t, "output-available", p["state"])
			assert.Equal(t, turn+"-call-1", p["toolCallId"])
			assert.Equal(t, map[string]any{"q": "refund policy"}, p["input"])
			assert.Equal(t, map[string]any{"hits": float64(2)}, p["output"])
		case typ == "data-card":
			cards++
			assert.Equal(t, "card-"+turn, p["id"])
			data := p["data"].(map[string]any)
			assert.Equal(t, "open", data["status"])
			assert.Equal(t, turnscript.CardPrompt, data["card"].(map[string]any)["prompt"])
		case typ == "step-start":
		default:
			t.Errorf("an unexpected part %v", p)
		}
	}
	assert.Equal(t, []string{strings.Join(turnscript.Before, ""), strings.Join(turnscript.After, "")}, texts)
	assert.Equal(t, 1, tools)
	if card {
		assert.Equal(t, 1, cards)
	} else {
		assert.Zero(t, cards)
	}
}

func TestRealClientChatReadsTheWholeTurn(t *testing.T) {
	for _, line := range uiclients.Lines {
		t.Run("ai@"+line.Version, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 5*time.Millisecond, true, nil)
			requireWhole(t, rcChat(t, line.Package, f.srv.URL+"/api/chat", "chat-1", "send"), "t-1", true)
		})
	}
}

func TestRealClientChatResumesAfterACut(t *testing.T) {
	for _, line := range uiclients.Lines {
		if !line.ResumesInPlace {
			continue
		}
		t.Run("ai@"+line.Version, func(t *testing.T) {
			t.Parallel()
			// The last frame waits for the client's resume: the cut never
			// races the turn's end.
			f := newFixtureOf(t, &turnscript.Host{Window: replay.NewMemory(nil), Pace: 40 * time.Millisecond, HoldLast: true}, nil)
			proxy, err := cutproxy.New(strings.TrimPrefix(f.srv.URL, "http://"), &cutproxy.Options{
				Arm: []byte("text/event-stream"), Plan: cutproxy.Fixed(cutproxy.Cut{Bytes: 400})})
			require.NoError(t, err)
			t.Cleanup(func() { proxy.Close() })
			run := rcChat(t, line.Package, "http://"+proxy.Addr()+"/api/chat", "chat-1", "cut")
			require.Equal(t, 1, proxy.Stats().Cuts, "the proxy cut the first response")
			requireWhole(t, run, "t-1", false)
		})
	}
}

func TestRealClientChatResumesOnReload(t *testing.T) {
	for _, line := range uiclients.Lines {
		t.Run("ai@"+line.Version, func(t *testing.T) {
			t.Parallel()
			// The last frame waits for the reloaded Chat's resume, however
			// long Node takes to start.
			f := newFixtureOf(t, &turnscript.Host{Window: replay.NewMemory(nil), Pace: 20 * time.Millisecond, Card: true, HoldLast: true}, nil)
			resp := f.post(t, submit) // the page that is reloaded: it goes away
			resp.Body.Close()
			requireWhole(t, rcChat(t, line.Package, f.srv.URL+"/api/chat", "chat-1", "reload"), "t-1", true)
			after := f.get(t, "chat-1")
			after.Body.Close()
			assert.Equal(t, http.StatusNoContent, after.StatusCode)
		})
	}
}

// TestRealClientChatStopsTheTurnByTheRecipe: the ai documentation's stop
// of a resumable stream, a POST {api}/{chatId}/stop with the partial
// assistant message and the active stream's id, then chat.stop(), ends the
// server's turn cancelled through recovery, as the cancel endpoint does;
// the Chat keeps the partial message, and a reload finds nothing to
// resume.
func TestRealClientChatStopsTheTurnByTheRecipe(t *testing.T) {
	for _, line := range uiclients.Lines {
		t.Run("ai@"+line.Version, func(t *testing.T) {
			t.Parallel()
			f := newStopFixture(t, 300*time.Millisecond)
			run := rcChat(t, line.Package, f.srv.URL+"/api/chat", "chat-1", "stop", `{"X-User":"`+turnhost.User+`"}`)
			require.Empty(t, run.Errors)
			assert.Equal(t, "ready", run.Status)
			require.Len(t, run.Messages, 2)
			text := run.Messages[1].text()
			assert.NotEmpty(t, text)
			assert.True(t, strings.HasPrefix(turnscript.Text(), text), "%q", text)
			assert.NotEqual(t, turnscript.Text(), text, "the turn was not stopped")

			status, lifecycle := f.ended(t, replay.Key{ConversationID: "chat-1", TurnID: "t-1"})
			assert.Equal(t, recovery.TurnCancelled, status)
			assert.Equal(t, chatprotocol.LifecycleCancelled, lifecycle)
			require.NotNil(t, run.Reload)
			assert.Len(t, run.Reload.Messages, 1, "a reload resumed a stopped turn")
			want := "ready"
			if line.Version == "5.0.0" {
				want = "submitted" // 5.0.0 returns from a resume that finds no stream (204) before it resets the status
			}
			assert.Equal(t, want, run.Reload.Status)
		})
	}
}

// TestRealClientChatStopAloneStopsNothing: chat.stop() alone only closes
// the request, as the ai documentation says of a resumable stream: the
// server's turn goes on to complete, and a reload resumes it whole.
func TestRealClientChatStopAloneStopsNothing(t *testing.T) {
	for _, line := range uiclients.Lines {
		t.Run("ai@"+line.Version, func(t *testing.T) {
			t.Parallel()
			f := newStopFixture(t, 300*time.Millisecond)
			run := rcChat(t, line.Package, f.srv.URL+"/api/chat", "chat-1", "abort", `{"X-User":"`+turnhost.User+`"}`)
			require.Empty(t, run.Errors)
			require.NotNil(t, run.Reload)
			assert.Equal(t, "ready", run.Reload.Status, "error %v", run.Reload.Error)
			require.Len(t, run.Reload.Messages, 2)
			assert.Equal(t, "t-1", run.Reload.Messages[1].ID)
			assert.Equal(t, turnscript.Text(), run.Reload.Messages[1].text())

			status, lifecycle := f.ended(t, replay.Key{ConversationID: "chat-1", TurnID: "t-1"})
			assert.Equal(t, recovery.TurnCompleted, status)
			assert.Equal(t, chatprotocol.LifecycleCompleted, lifecycle)
		})
	}
}

// TestRealClientChatReadsTheSteps: a turn of two model steps reads whole in
// every ai line: one step-start part per step, the texts of the two steps
// apart, the tool part complete though its result came between the steps
// (docs/contract.md section 18.1).
func TestRealClientChatReadsTheSteps(t *testing.T) {
	for _, line := range uiclients.Lines {
		t.Run("ai@"+line.Version, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, 5*time.Millisecond, true, nil)
			f.host.SetSteps(true, false)
			run := rcChat(t, line.Package, f.srv.URL+"/api/chat", "chat-1", "send")
			requireWhole(t, run, "t-1", true)
			var kinds []string
			for _, p := range run.Messages[1].Parts {
				kinds = append(kinds, p["type"].(string))
			}
			assert.Equal(t, []string{"step-start", "text", "tool-" + turnscript.ToolName, "step-start", "text", "data-card"}, kinds)
		})
	}
}
