package agent_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/agent/httpmodel"
	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
	"github.com/Papercusp/chat-protocol-go/turn"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// quickAccess is the quick start's access rule: the bearer token alice
// is the person alice, who may do everything with her conversations.
var quickAccess = conversation.OwnerOnly(func(r *http.Request) (conversation.Principal, error) {
	if r.Header.Get("Authorization") != "Bearer alice" {
		return conversation.Principal{}, errors.New("no session")
	}
	return conversation.Principal{ID: "alice"}, nil
})

// quickStart is the README's agent quick start, verbatim between the
// markers: an agent on Anthropic's API (at providerURL) with one tool,
// served to useChat and to the version-1 stream on mux until ctx ends.
func quickStart(ctx context.Context, mux *http.ServeMux, providerURL string) error {
	access := quickAccess
	// README:begin
	model, err := httpmodel.New(ingest.AnthropicMessages, &httpmodel.Options{
		BaseURL: providerURL, APIKey: os.Getenv("ANTHROPIC_API_KEY"), Model: "claude-sonnet-4-5"})
	if err != nil {
		return err
	}
	weather := agent.Tool{
		Spec: agent.ToolSpec{Name: "get_weather", Description: "The weather at a place.",
			Schema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)},
		Run: func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
			return json.RawMessage(`{"temp_c":18,"sky":"sunny"}`), nil // the host's own lookup
		},
	}
	loop := &agent.Loop{Model: model, Tools: []agent.Tool{weather}, System: "Answer briefly."}

	window, runs := replay.NewMemory(nil), turn.NewRuns()
	g := &conversation.Gate{Store: conversation.Settling{Store: conversation.NewMemoryStore(), Window: window}, Access: access}
	g.Recovery = recovery.New(recovery.Host{Store: recovery.NewMemoryStore(nil), Authorizer: g, Aborter: runs}, nil)
	turns := conversation.NewRunner(ctx, g.Store, window, slog.Default()) // a turn runs on when its client goes away
	run := func(ctx context.Context, _ *http.Request, c conversation.Conversation, t conversation.Turn, _ *uistream.Request) error {
		h, err := g.Store.History(ctx, c.ID)
		if err != nil {
			return err
		}
		history, err := h.Messages() // the earlier turns, then this turn's user text
		if err != nil {
			return err
		}
		return turns.Start(replay.Key{ConversationID: c.ID, TurnID: t.ID}, &turn.Options{Recovery: g.Recovery, Runs: runs, Caller: c.Owner.String()},
			func(ctx context.Context, p *turn.Producer) error { _, err := loop.Run(ctx, p, history); return err })
	}
	ui, err := uistream.NewHandler(window, &uistream.HandlerOptions{StartTurn: uistream.StartTurnOf(g, run), ActiveTurn: g.ActiveTurn, Cancel: g.Cancel})
	if err != nil {
		return err
	}
	events, err := stream.NewHandler(window, &stream.HandlerOptions{Authorize: g.AuthorizeStream})
	if err != nil {
		return err
	}
	ui.Register(mux, "/api/chat")                                           // useChat's api
	mux.Handle("/conversations/{conversation}/turns/{turn}/events", events) // the version-1 stream
	// README:end
	go func() { <-ctx.Done(); turns.Wait(); ui.Close(); events.Close() }()
	return nil
}

// The quick start against the loopback provider: a useChat POST runs the
// model, the tool and the model again, and the version-1 stream of the
// same turn ends completed with the tool's result and the answer.
func TestReadmeQuickStart(t *testing.T) {
	var bodies [2][]byte
	for i := range bodies {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "providers", "anthropic-messages", "tool-then-answer-step"+string(rune('1'+i))+".sse"))
		require.NoError(t, err)
		bodies[i] = b
	}
	provider, reqs := ingestkit.ServeSteps(t, bodies[0], bodies[1])
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mux := http.NewServeMux()
	require.NoError(t, quickStart(ctx, mux, provider))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	post, err := http.NewRequest(http.MethodPost, srv.URL+"/api/chat", strings.NewReader(
		`{"id":"chat-1","trigger":"submit-message","messages":[{"id":"m-1","role":"user","parts":[{"type":"text","text":"Weather in Paris?"}]}]}`))
	require.NoError(t, err)
	post.Header.Set("Authorization", "Bearer alice")
	post.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(post)
	require.NoError(t, err)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST: %d %s", resp.StatusCode, b)
	}
	var types []string
	var turnID string
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		data, ok := strings.CutPrefix(lines.Text(), "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var chunk struct{ Type, MessageID string }
		require.NoError(t, json.Unmarshal([]byte(data), &chunk))
		types = append(types, chunk.Type)
		if chunk.Type == "start" {
			turnID = chunk.MessageID
		}
	}
	assert.Contains(t, types, "tool-output-available")
	assert.Equal(t, "finish", types[len(types)-1])
	require.NotEmpty(t, turnID)

	state, err := stream.Follow(ctx, srv.URL+"/conversations/chat-1/turns/"+turnID+"/events", &stream.FollowOptions{
		Header: http.Header{"Authorization": {"Bearer alice"}}})
	require.NoError(t, err)
	tt, ok := state.Turn(turnID)
	require.True(t, ok)
	assert.Equal(t, chatprotocol.LifecycleCompleted, tt.Status)
	require.Len(t, tt.Steps, 2)
	require.Len(t, tt.ToolCalls, 2)
	assert.JSONEq(t, `{"temp_c":18,"sky":"sunny"}`, string(tt.ToolCalls[0].Output))
	assert.Equal(t, chatprotocol.ToolCallStatus("error"), tt.ToolCalls[1].Status, "get_time is no tool of the agent: answered to the model")
	assert.True(t, strings.HasSuffix(tt.Text(), "It is 18°C and sunny in Paris, and the local time is 14:05."), tt.Text())
	assert.Len(t, reqs.Bodies(), 2)
}
