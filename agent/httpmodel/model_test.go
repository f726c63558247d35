package httpmodel_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/agent/httpmodel"
	"github.com/Papercusp/chat-protocol-go/ingest"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
)

// provider is a loopback provider: it records every request and answers
// the n-th with the n-th recorded body.
type provider struct {
	mu       sync.Mutex
	bodies   [][]byte
	requests []recorded
}

type recorded struct {
	path   string
	header http.Header
	body   map[string]any
}

func (p *provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	n := len(p.requests)
	p.requests = append(p.requests, recorded{r.URL.Path, r.Header.Clone(), body})
	p.mu.Unlock()
	if n >= len(p.bodies) {
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":{"type":"rate_limit_error","message":"slow down"}}`))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	_, _ = w.Write(p.bodies[n])
}

// stepSink records one step as a reader drives it.
type stepSink struct {
	text   string
	calls  []agent.Call
	reason string
	code   chatprotocol.ErrorCode
	ended  int
}

func (s *stepSink) Provenance(context.Context, string, string, string) error { return nil }
func (s *stepSink) Delta(_ context.Context, text string) error               { s.text += text; return nil }
func (s *stepSink) AnnounceToolCall(_ context.Context, id, name string, in json.RawMessage) error {
	s.calls = append(s.calls, agent.Call{ID: id, Name: name, Input: in})
	return nil
}
func (s *stepSink) Usage(context.Context, chatprotocol.Usage) error { return nil }
func (s *stepSink) Complete(_ context.Context, reason string) error {
	s.reason = reason
	s.ended++
	return nil
}
func (s *stepSink) Fail(_ context.Context, code chatprotocol.ErrorCode, _ string, _ bool) error {
	s.code = code
	s.ended++
	return nil
}

func recording(t *testing.T, kind ingest.Kind, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "providers", string(kind), name))
	require.NoError(t, err)
	return b
}

var weather = agent.ToolSpec{Name: "get_weather", Description: "The weather of a place.", Schema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}}}`)}

// twoSteps runs step 1 on a user message, then step 2 on the conversation
// extended with step 1 and an ok and an error result of its calls, and
// returns the two recorded requests and step 1's calls.
func twoSteps(t *testing.T, kind ingest.Kind, first, second string) ([]recorded, []agent.Call) {
	t.Helper()
	prov := &provider{bodies: [][]byte{recording(t, kind, first), recording(t, kind, second)}}
	srv := httptest.NewServer(prov)
	defer srv.Close()
	m, err := httpmodel.New(kind, &httpmodel.Options{BaseURL: srv.URL, APIKey: "k-test", Model: "m-test", Client: srv.Client()})
	require.NoError(t, err)
	ctx := context.Background()
	req := &agent.Request{System: "Be brief.", Tools: []agent.ToolSpec{weather}, Messages: []agent.Message{{Role: agent.RoleUser, Text: "Weather in Paris?"}}}
	s1 := &stepSink{}
	_, err = m.Step(ctx, req, s1)
	require.NoError(t, err)
	require.Equal(t, 1, s1.ended)
	require.NotEmpty(t, s1.calls, "step 1 asks for a tool")
	results := agent.Message{Role: agent.RoleTool}
	for i, c := range s1.calls {
		r := agent.Result{CallID: c.ID, Name: c.Name, Output: json.RawMessage(`{"temp":21}`)}
		if i == 1 {
			r = agent.Result{CallID: c.ID, Name: c.Name, Output: json.RawMessage(`"no such zone"`), IsError: true}
		}
		results.Results = append(results.Results, r)
	}
	req.Messages = append(req.Messages, agent.Message{Role: agent.RoleAssistant, Text: s1.text, Calls: s1.calls}, results)
	s2 := &stepSink{}
	_, err = m.Step(ctx, req, s2)
	require.NoError(t, err)
	require.Equal(t, 1, s2.ended)
	require.NotEmpty(t, s2.text)
	require.Len(t, prov.requests, 2)
	return prov.requests, s1.calls
}

func TestChatSecondRequestCarriesCallsAndResults(t *testing.T) {
	reqs, calls := twoSteps(t, ingest.OpenAIChat, "tool-calls-interleaved.sse", "text.sse")
	require.Len(t, calls, 2)
	r := reqs[1]
	assert.Equal(t, "/v1/chat/completions", r.path)
	assert.Equal(t, "Bearer k-test", r.header.Get("Authorization"))
	assert.Equal(t, true, r.body["stream"])
	assert.Equal(t, map[string]any{"include_usage": true}, r.body["stream_options"])
	msgs := r.body["messages"].([]any)
	require.Len(t, msgs, 5)
	assert.Equal(t, map[string]any{"role": "system", "content": "Be brief."}, msgs[0])
	assert.Equal(t, map[string]any{"role": "user", "content": "Weather in Paris?"}, msgs[1])
	asst := msgs[2].(map[string]any)
	assert.Equal(t, "assistant", asst["role"])
	assert.Nil(t, asst["content"], "no text: content null beside tool_calls")
	tcs := asst["tool_calls"].([]any)
	require.Len(t, tcs, 2)
	for i, c := range calls {
		tc := tcs[i].(map[string]any)
		assert.Equal(t, c.ID, tc["id"])
		assert.Equal(t, "function", tc["type"])
		fn := tc["function"].(map[string]any)
		assert.Equal(t, c.Name, fn["name"])
		assert.JSONEq(t, string(c.Input), fn["arguments"].(string))
	}
	assert.Equal(t, map[string]any{"role": "tool", "tool_call_id": calls[0].ID, "content": `{"temp":21}`}, msgs[3])
	assert.Equal(t, map[string]any{"role": "tool", "tool_call_id": calls[1].ID, "content": `{"error":"no such zone"}`}, msgs[4])
	tools := r.body["tools"].([]any)
	assert.Equal(t, map[string]any{"type": "function", "function": map[string]any{"name": "get_weather", "description": "The weather of a place.",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"location": map[string]any{"type": "string"}}}}}, tools[0])
}

func TestResponsesSecondRequestCarriesCallsAndResults(t *testing.T) {
	reqs, calls := twoSteps(t, ingest.OpenAIResponses, "function-calls.sse", "text.sse")
	require.Len(t, calls, 2)
	r := reqs[1]
	assert.Equal(t, "/v1/responses", r.path)
	assert.Equal(t, "Be brief.", r.body["instructions"])
	in := r.body["input"].([]any)
	want := []any{map[string]any{"role": "user", "content": "Weather in Paris?"}}
	for _, c := range calls {
		want = append(want, map[string]any{"type": "function_call", "call_id": c.ID, "name": c.Name, "arguments": string(c.Input)})
	}
	want = append(want,
		map[string]any{"type": "function_call_output", "call_id": calls[0].ID, "output": `{"temp":21}`},
		map[string]any{"type": "function_call_output", "call_id": calls[1].ID, "output": `{"error":"no such zone"}`})
	assert.Equal(t, want, in)
	tool := r.body["tools"].([]any)[0].(map[string]any)
	assert.Equal(t, "function", tool["type"])
	assert.Equal(t, "get_weather", tool["name"])
	assert.Equal(t, false, tool["strict"])
}

func TestAnthropicSecondRequestAnswersEveryToolUse(t *testing.T) {
	reqs, calls := twoSteps(t, ingest.AnthropicMessages, "tool-use-parallel.sse", "text.sse")
	require.Len(t, calls, 2)
	r := reqs[1]
	assert.Equal(t, "/v1/messages", r.path)
	assert.Equal(t, "k-test", r.header.Get("x-api-key"))
	assert.Equal(t, "2023-06-01", r.header.Get("anthropic-version"))
	assert.Equal(t, float64(httpmodel.DefaultMaxTokens), r.body["max_tokens"])
	assert.Equal(t, "Be brief.", r.body["system"])
	msgs := r.body["messages"].([]any)
	require.Len(t, msgs, 3)
	asst := msgs[1].(map[string]any)
	assert.Equal(t, "assistant", asst["role"])
	var uses []any
	for _, b := range asst["content"].([]any) {
		if b.(map[string]any)["type"] == "tool_use" {
			uses = append(uses, b)
		}
	}
	require.Len(t, uses, 2)
	user := msgs[2].(map[string]any)
	assert.Equal(t, "user", user["role"])
	blocks := user["content"].([]any)
	require.Len(t, blocks, 2, "every tool_use answered in the next user message")
	for i, c := range calls {
		u := uses[i].(map[string]any)
		assert.Equal(t, c.ID, u["id"])
		var in any
		require.NoError(t, json.Unmarshal(c.Input, &in))
		assert.Equal(t, in, u["input"])
		b := blocks[i].(map[string]any)
		assert.Equal(t, "tool_result", b["type"])
		assert.Equal(t, c.ID, b["tool_use_id"])
	}
	assert.Equal(t, []any{map[string]any{"type": "text", "text": `{"temp":21}`}}, blocks[0].(map[string]any)["content"])
	assert.Nil(t, blocks[0].(map[string]any)["is_error"])
	assert.Equal(t, true, blocks[1].(map[string]any)["is_error"])
}

func TestAnHTTPErrorFailsTheStep(t *testing.T) {
	for _, kind := range ingest.Kinds() {
		srv := httptest.NewServer(&provider{})
		m, err := httpmodel.New(kind, &httpmodel.Options{BaseURL: srv.URL, Model: "m", Client: srv.Client()})
		require.NoError(t, err)
		s := &stepSink{}
		_, err = m.Step(context.Background(), &agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: "hi"}}}, s)
		srv.Close()
		require.NoError(t, err, kind)
		assert.Equal(t, ingest.CodeRateLimited, s.code, kind)
		assert.Equal(t, 1, s.ended, kind)
	}
}

func TestAnthropicMergesRolesAndKeepsThinking(t *testing.T) {
	req := &agent.Request{Messages: []agent.Message{
		{Role: agent.RoleUser, Text: "a"},
		{Role: agent.RoleAssistant, Reasoning: []agent.Reasoning{{Text: "hmm", Signature: "sig-1"}, {Redacted: "opaque"}}, Calls: []agent.Call{{ID: "toolu_1", Name: "t"}}},
		{Role: agent.RoleTool, Results: []agent.Result{{CallID: "toolu_1", Name: "t"}}},
		{Role: agent.RoleUser, Text: "b"},
		{Role: agent.RoleAssistant},
	}}
	b, err := httpmodel.Body(ingest.AnthropicMessages, "m", 100, req)
	require.NoError(t, err)
	assert.JSONEq(t, `{"model":"m","max_tokens":100,"stream":true,"messages":[
		{"role":"user","content":[{"type":"text","text":"a"}]},
		{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig-1"},{"type":"redacted_thinking","data":"opaque"},{"type":"tool_use","id":"toolu_1","name":"t","input":{}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1"},{"type":"text","text":"b"}]}]}`, string(b))
}

func TestNewRefuses(t *testing.T) {
	_, err := httpmodel.New("nope", &httpmodel.Options{BaseURL: "http://x", Model: "m"})
	assert.Error(t, err)
	_, err = httpmodel.New(ingest.OpenAIChat, &httpmodel.Options{Model: "m"})
	assert.Error(t, err)
	_, err = httpmodel.New(ingest.OpenAIChat, nil)
	assert.Error(t, err)
}
