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

// reasonedTurn is a turn with reasoning, text, a source, a tool call and
// its result, more reasoning and text, completed with reason.
func reasonedTurn(t *testing.T, reason string) []chatprotocol.Event {
	t.Helper()
	r := func(text string) chatprotocol.Event {
		ev, err := chatprotocol.Reasoning{Text: text}.Event()
		require.NoError(t, err)
		return ev
	}
	src, err := chatprotocol.WebSource{URL: "https://example.com/w", Title: "Weather"}.Event()
	require.NoError(t, err)
	bare, err := chatprotocol.WebSource{URL: "https://example.com/x"}.Event()
	require.NoError(t, err)
	return []chatprotocol.Event{&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		r("I need the GCD."), r(" 1071 = 2*462 + 147."), &chatprotocol.DeltaEvent{Text: "The GCD is"}, src,
		&chatprotocol.DeltaEvent{Text: " 21."},
		&chatprotocol.ToolCallEvent{CallID: "call-1", Name: "check", Input: json.RawMessage(`{"n":21}`)},
		&chatprotocol.ToolResultEvent{CallID: "call-1", Status: chatprotocol.ToolResultOK, Output: json.RawMessage(`true`)},
		r("Checked."), bare, &chatprotocol.DeltaEvent{Text: "Confirmed."},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted, Reason: reason}}
}

// serveTurn serves evs as chat-1's turn t-1 through a handler of opts and
// returns its URL's /api/chat.
func serveTurn(t *testing.T, evs []chatprotocol.Event, opts uistream.HandlerOptions) string {
	t.Helper()
	w := replay.NewMemory(nil)
	key := replay.Key{ConversationID: "chat-1", TurnID: "t-1"}
	for _, env := range turnscript.Envelopes(key, evs) {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
	opts.StartTurn = func(context.Context, *http.Request, *uistream.Request) (replay.Key, error) { return key, nil }
	opts.ActiveTurn = func(context.Context, *http.Request, string) (replay.Key, bool, error) { return key, true, nil }
	h, err := uistream.NewHandler(w, &opts)
	require.NoError(t, err)
	mux := http.NewServeMux()
	h.Register(mux, "/api/chat")
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL + "/api/chat"
}

func postBody(t *testing.T, api string) string {
	t.Helper()
	resp, err := http.Post(api, "application/json", strings.NewReader(submit))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

func registry(t *testing.T) *chatprotocol.Registry {
	t.Helper()
	reg, err := chatprotocol.NewRegistry(nil, chatprotocol.WithReasoning(), chatprotocol.WithSources())
	require.NoError(t, err)
	return reg
}

// TestRegisteredEventsChunks: with the registry, reasoning streams as a
// reasoning part that the next text, tool call or end closes, a source as
// a source-url part; finish carries the mapped finishReason; without the
// registry neither reaches the client (docs/contract.md section 18.1).
func TestRegisteredEventsChunks(t *testing.T) {
	body := postBody(t, serveTurn(t, reasonedTurn(t, "end_turn"), uistream.HandlerOptions{Registry: registry(t), FinishReason: true}))
	want := []string{
		`{"type":"start","messageId":"t-1"}`,
		`{"type":"start-step"}`,
		`{"type":"reasoning-start","id":"reasoning-2"}`,
		`{"type":"reasoning-delta","id":"reasoning-2","delta":"I need the GCD."}`,
		`{"type":"reasoning-delta","id":"reasoning-2","delta":" 1071 = 2*462 + 147."}`,
		`{"type":"reasoning-end","id":"reasoning-2"}`,
		`{"type":"text-start","id":"text-4"}`,
		`{"type":"text-delta","id":"text-4","delta":"The GCD is"}`,
		`{"type":"source-url","sourceId":"source-5","url":"https://example.com/w","title":"Weather"}`,
		`{"type":"text-delta","id":"text-4","delta":" 21."}`,
		`{"type":"text-end","id":"text-4"}`,
		`{"type":"tool-input-start","toolCallId":"call-1","toolName":"check"}`,
		`{"type":"tool-input-available","toolCallId":"call-1","toolName":"check","input":{"n":21}}`,
		`{"type":"tool-output-available","toolCallId":"call-1","output":true}`,
		`{"type":"reasoning-start","id":"reasoning-9"}`,
		`{"type":"reasoning-delta","id":"reasoning-9","delta":"Checked."}`,
		`{"type":"source-url","sourceId":"source-10","url":"https://example.com/x"}`,
		`{"type":"reasoning-end","id":"reasoning-9"}`,
		`{"type":"text-start","id":"text-11"}`,
		`{"type":"text-delta","id":"text-11","delta":"Confirmed."}`,
		`{"type":"text-end","id":"text-11"}`,
		`{"type":"finish-step"}`,
		`{"type":"finish","finishReason":"stop"}`,
		`[DONE]`,
	}
	assert.Equal(t, "data: "+strings.Join(want, "\n\ndata: ")+"\n\n", body)

	plain := postBody(t, serveTurn(t, reasonedTurn(t, "end_turn"), uistream.HandlerOptions{}))
	assert.NotContains(t, plain, "reasoning")
	assert.NotContains(t, plain, "source")
	assert.NotContains(t, plain, "GCD.")
	assert.Contains(t, plain, `"delta":"The GCD is"`)
	assert.Contains(t, plain, `{"type":"finish"}`)

	var out struct {
		Checked int
		Types   []string
		Errors  []string
	}
	require.NoError(t, json.Unmarshal(uiclients.RunWith(t, 30*time.Second, []byte(body), "schemas.mjs", "ui"), &out))
	assert.Empty(t, out.Errors)
	for _, typ := range []string{"reasoning-start", "reasoning-delta", "reasoning-end", "source-url", "finish"} {
		assert.Contains(t, out.Types, typ)
	}
}

// TestFinishReasonOfTheTurn: FinishReason maps the turn's stop reason, its
// lifecycle's, else its last step's, to ai's values (docs/contract.md
// section 18.1).
func TestFinishReasonOfTheTurn(t *testing.T) {
	end := func(reason string) []chatprotocol.Event {
		return []chatprotocol.Event{&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}, &chatprotocol.DeltaEvent{Text: "x"},
			&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted, Reason: reason}}
	}
	for reason, want := range map[string]string{
		"": "stop", "stop": "stop", "end_turn": "stop", "stop_sequence": "stop",
		"length": "length", "max_tokens": "length", "max_output_tokens": "length",
		"tool_calls": "tool-calls", "tool_use": "tool-calls",
		"content_filter": "content-filter", "refusal": "content-filter",
		"pause_turn": "other",
	} {
		body := postBody(t, serveTurn(t, end(reason), uistream.HandlerOptions{FinishReason: true}))
		assert.Contains(t, body, `{"type":"finish","finishReason":"`+want+`"}`, reason)
	}
	stepped := []chatprotocol.Event{&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		&chatprotocol.StepEvent{Step: 1, Status: chatprotocol.StepStarted}, &chatprotocol.DeltaEvent{Text: "x"},
		&chatprotocol.StepEvent{Step: 1, Status: chatprotocol.StepFinished, Reason: "max_tokens"},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}}
	assert.Contains(t, postBody(t, serveTurn(t, stepped, uistream.HandlerOptions{FinishReason: true})), `{"type":"finish","finishReason":"length"}`)
	assert.Contains(t, postBody(t, serveTurn(t, stepped, uistream.HandlerOptions{})), `{"type":"finish"}`)
}

// TestRealClientChatShowsReasoningAndSources: the ai Chat of every
// installed line holds the reasoning parts and the source parts of a turn
// the host registered them for, and the text apart (docs/contract.md
// section 18.1); 5.0.0 without finishReason, which it refuses.
func TestRealClientChatShowsReasoningAndSources(t *testing.T) {
	for _, line := range uiclients.Lines {
		t.Run("ai@"+line.Version, func(t *testing.T) {
			t.Parallel()
			api := serveTurn(t, reasonedTurn(t, "end_turn"), uistream.HandlerOptions{Registry: registry(t), FinishReason: line.Version != "5.0.0"})
			run := rcChat(t, line.Package, api, "chat-1", "send")
			require.Equal(t, "ready", run.Status, "error %v, errors %v", run.Error, run.Errors)
			require.Len(t, run.Messages, 2)
			m := run.Messages[1]
			var reasoning, texts []string
			var sources []map[string]any
			for _, p := range m.Parts {
				switch p["type"] {
				case "reasoning":
					reasoning = append(reasoning, p["text"].(string))
				case "source-url":
					sources = append(sources, p)
				case "text":
					texts = append(texts, p["text"].(string))
				}
			}
			assert.Equal(t, []string{"I need the GCD. 1071 = 2*462 + 147.", "Checked."}, reasoning)
			assert.Equal(t, []string{"The GCD is 21.", "Confirmed."}, texts)
			require.Len(t, sources, 2)
			assert.Equal(t, "https://example.com/w", sources[0]["url"])
			assert.Equal(t, "Weather", sources[0]["title"])
			assert.Equal(t, "source-5", sources[0]["sourceId"])
			assert.Equal(t, "https://example.com/x", sources[1]["url"])
		})
	}
}
