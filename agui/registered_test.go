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

// serveReasoned serves a turn with reasoning, text, a source and more
// reasoning as thread-1's run through a handler with reg, and returns its
// URL.
func serveReasoned(t *testing.T, reg *chatprotocol.Registry) string {
	t.Helper()
	r := func(text string) chatprotocol.Event {
		ev, err := chatprotocol.Reasoning{Text: text}.Event()
		require.NoError(t, err)
		return ev
	}
	src, err := chatprotocol.WebSource{URL: "https://example.com/w", Title: "Weather <&>"}.Event()
	require.NoError(t, err)
	evs := []chatprotocol.Event{&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		r("I need the GCD."), r(" 1071 = 2*462 + 147."), &chatprotocol.DeltaEvent{Text: "The GCD is 21."}, src,
		r("Done."), &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}}
	w := replay.NewMemory(nil)
	key := replay.Key{ConversationID: "thread-1", TurnID: "t-1"}
	for _, env := range turnscript.Envelopes(key, evs) {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
	h, err := agui.NewHandler(w, &agui.HandlerOptions{Registry: reg,
		StartRun: func(context.Context, *http.Request, *agui.RunInput) (replay.Key, error) { return key, nil },
	})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRegisteredEventsAsAGUIEvents: with the registry, reasoning streams as
// AG-UI reasoning messages, closed before the text and at the run's end, a
// source as CUSTOM chatprotocol.source; without it neither reaches the
// client (docs/contract.md section 18.2). @ag-ui/core's schemas accept
// every event.
func TestRegisteredEventsAsAGUIEvents(t *testing.T) {
	reg, err := chatprotocol.NewRegistry(nil, chatprotocol.WithReasoning(), chatprotocol.WithSources())
	require.NoError(t, err)
	post := func(url string) string {
		resp, err := http.Post(url, "application/json", strings.NewReader(input))
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return string(body)
	}
	body := post(serveReasoned(t, reg))
	want := []string{
		`{"type":"RUN_STARTED","threadId":"thread-1","runId":"run-1"}`,
		`{"type":"REASONING_START","messageId":"t-1-r2"}`,
		`{"type":"REASONING_MESSAGE_START","messageId":"t-1-r2","role":"reasoning"}`,
		`{"type":"REASONING_MESSAGE_CONTENT","messageId":"t-1-r2","delta":"I need the GCD."}`,
		`{"type":"REASONING_MESSAGE_CONTENT","messageId":"t-1-r2","delta":" 1071 = 2*462 + 147."}`,
		`{"type":"REASONING_MESSAGE_END","messageId":"t-1-r2"}`,
		`{"type":"REASONING_END","messageId":"t-1-r2"}`,
		`{"type":"TEXT_MESSAGE_START","messageId":"t-1-m4","role":"assistant"}`,
		`{"type":"TEXT_MESSAGE_CONTENT","messageId":"t-1-m4","delta":"The GCD is 21."}`,
		`{"type":"TEXT_MESSAGE_END","messageId":"t-1-m4"}`,
		`{"type":"CUSTOM","name":"chatprotocol.source","value":{"type":"source","url":"https://example.com/w","title":"Weather <&>"}}`,
		`{"type":"REASONING_START","messageId":"t-1-r6"}`,
		`{"type":"REASONING_MESSAGE_START","messageId":"t-1-r6","role":"reasoning"}`,
		`{"type":"REASONING_MESSAGE_CONTENT","messageId":"t-1-r6","delta":"Done."}`,
		`{"type":"REASONING_MESSAGE_END","messageId":"t-1-r6"}`,
		`{"type":"REASONING_END","messageId":"t-1-r6"}`,
		`{"type":"RUN_FINISHED","threadId":"thread-1","runId":"run-1","outcome":{"type":"success"}}`,
	}
	assert.Equal(t, "data: "+strings.Join(want, "\n\ndata: ")+"\n\n", body)

	plain := post(serveReasoned(t, nil))
	assert.NotContains(t, plain, "REASONING")
	assert.NotContains(t, plain, "source")

	var out struct {
		Checked int
		Types   []string
		Errors  []string
	}
	require.NoError(t, json.Unmarshal(uiclients.RunWith(t, 30*time.Second, []byte(body), "schemas.mjs", "agui"), &out))
	assert.Empty(t, out.Errors)
	assert.Equal(t, len(want), out.Checked)
}

// TestRealClientHttpAgentReadsReasoning: @ag-ui/client's HttpAgent, with
// its event verification, runs a turn with reasoning and a source to its
// end, and holds the text message apart from the reasoning.
func TestRealClientHttpAgentReadsReasoning(t *testing.T) {
	reg, err := chatprotocol.NewRegistry(nil, chatprotocol.WithReasoning(), chatprotocol.WithSources())
	require.NoError(t, err)
	out := uiclients.Run(t, 60*time.Second, "agrun.mjs", serveReasoned(t, reg), "thread-1", `{}`, `null`)
	var run rcRun
	require.NoError(t, json.Unmarshal(out, &run), string(out))
	require.Len(t, run.Runs, 1)
	require.Nil(t, run.Runs[0].Error)
	assert.Equal(t, "success", run.Runs[0].Outcome["type"])
	var types []string
	for _, ev := range run.Runs[0].Events {
		types = append(types, ev["type"].(string))
	}
	assert.Contains(t, types, "REASONING_MESSAGE_CONTENT")
	var texts []string
	for _, m := range run.Messages {
		if m["role"] == "assistant" {
			if c, ok := m["content"].(string); ok {
				texts = append(texts, c)
			}
		}
	}
	assert.Equal(t, []string{"The GCD is 21."}, texts)
}
