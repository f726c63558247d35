package anthropicsdk_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/ingest/anthropicsdk"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
)

// steps serves the recorded bodies, one per request, to a real client.
func steps(t *testing.T, names ...string) (*anthropic.Client, *ingestkit.Requests) {
	t.Helper()
	bodies := make([][]byte, len(names))
	for i, n := range names {
		body, err := os.ReadFile(filepath.Join(providers, "anthropic-messages", n))
		require.NoError(t, err)
		bodies[i] = body
	}
	url, reqs := ingestkit.ServeSteps(t, bodies...)
	c := anthropic.NewClient(option.WithBaseURL(url), option.WithAPIKey("test"), option.WithMaxRetries(0))
	return &c, reqs
}

var tools = []agent.ToolSpec{
	{Name: "get_weather", Description: "The weather at a place.", Schema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)},
	{Name: "get_time", Schema: json.RawMessage(`{"type":"object","properties":{"tz":{"type":"string"}}}`)},
}

const question = "What is the weather and the time in Paris?"

func model(client *anthropic.Client) *anthropicsdk.MessagesModel {
	return &anthropicsdk.MessagesModel{Client: client, Params: anthropic.MessageNewParams{Model: "claude-sonnet-4-5-20250929", MaxTokens: 2048}}
}

// member decodes member name of a recorded request body.
func member(t *testing.T, body []byte, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &m))
	return string(m[name])
}

// TestMessagesModelTwoSteps: the first step writes text and asks for two
// tools; the second request has the assistant message's text and tool_use
// blocks, and the next user message answers both with tool_result blocks.
func TestMessagesModelTwoSteps(t *testing.T) {
	ctx := context.Background()
	client, reqs := steps(t, "tool-then-answer-step1.sse", "tool-then-answer-step2.sse")
	m := model(client)
	req := &agent.Request{System: "Answer briefly.", Messages: []agent.Message{{Role: agent.RoleUser, Text: question}}, Tools: tools}

	var s1 ingestkit.Step
	reply, err := m.Step(ctx, req, &s1)
	require.NoError(t, err)
	assert.Equal(t, "complete tool_use", s1.End)
	require.Len(t, s1.Calls, 2)
	assert.Empty(t, reply.Reasoning)
	req.Messages = append(req.Messages, s1.Message(reply), agent.Message{Role: agent.RoleTool, Results: []agent.Result{
		{CallID: s1.Calls[0].ID, Name: "get_weather", Output: json.RawMessage(`{"temp_c":18,"sky":"sunny"}`)},
		{CallID: s1.Calls[1].ID, Name: "get_time", Output: json.RawMessage(`"the clock is down"`), IsError: true},
	}})

	var s2 ingestkit.Step
	_, err = m.Step(ctx, req, &s2)
	require.NoError(t, err)
	assert.Equal(t, "It is 18°C and sunny in Paris, and the local time is 14:05.", s2.Text)

	bodies := reqs.Bodies()
	require.Len(t, bodies, 2)
	assert.JSONEq(t, `[{"role":"user","content":[{"type":"text","text":"`+question+`"}]}]`, member(t, bodies[0], "messages"))
	assert.JSONEq(t, `[{"type":"text","text":"Answer briefly."}]`, member(t, bodies[1], "system"))
	assert.JSONEq(t, `[
		{"name":"get_weather","description":"The weather at a place.","input_schema":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}},
		{"name":"get_time","input_schema":{"type":"object","properties":{"tz":{"type":"string"}}}}]`, member(t, bodies[1], "tools"))
	assert.Equal(t, `2048`, member(t, bodies[1], "max_tokens"))
	assert.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"`+question+`"}]},
		{"role":"assistant","content":[
			{"type":"text","text":"I'll check the weather and the time in Paris."},
			{"type":"tool_use","id":"toolu_01Qm4nV8xR2tK6wL9pZ3cB7d","name":"get_weather","input":{"location":"Paris, FR"}},
			{"type":"tool_use","id":"toolu_01Rn5oW9yS3uL7xM0qA4dC8e","name":"get_time","input":{"tz":"Europe/Paris"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_01Qm4nV8xR2tK6wL9pZ3cB7d","content":[{"type":"text","text":"{\"temp_c\":18,\"sky\":\"sunny\"}"}]},
			{"type":"tool_result","tool_use_id":"toolu_01Rn5oW9yS3uL7xM0qA4dC8e","content":[{"type":"text","text":"\"the clock is down\""}],"is_error":true}]}]`, member(t, bodies[1], "messages"))
}

// TestMessagesModelPassesThinkingBack: a step with a thinking block, a
// redacted one and a tool_use; the second request's assistant message
// starts with both blocks as received (the signature, the data), and a
// user text after the results joins their user message, results first.
func TestMessagesModelPassesThinkingBack(t *testing.T) {
	ctx := context.Background()
	client, reqs := steps(t, "thinking-tool-then-answer-step1.sse", "thinking-tool-then-answer-step2.sse")
	m := model(client)
	req := &agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: "What is the weather in Paris?"}}, Tools: tools[:1]}

	var s1 ingestkit.Step
	reply, err := m.Step(ctx, req, &s1)
	require.NoError(t, err)
	require.Len(t, s1.Calls, 1)
	const signature = "EuYBCkQYAiJAk3Nq0x7vT2mR8pW4yL6cZ1bH5dF9gJ3kS0uV2wX4zA6bC8dE0fG2hI4jK6lM8nO0pQ2rS4tU6vW8xY0zEgw7Q2m9VrX1"
	const redacted = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB8yN2gT1bC4xE6aW0rF"
	assert.Equal(t, []agent.Reasoning{
		{Text: "The user asks for the weather in Paris.\nI should call get_weather with Paris, FR.", Signature: signature},
		{Redacted: redacted},
	}, reply.Reasoning)
	req.Messages = append(req.Messages, s1.Message(reply),
		agent.Message{Role: agent.RoleTool, Results: []agent.Result{{CallID: s1.Calls[0].ID, Name: "get_weather", Output: json.RawMessage(`{"temp_c":18}`)}}},
		agent.Message{Role: agent.RoleUser, Text: "In Celsius, please."})

	var s2 ingestkit.Step
	reply2, err := m.Step(ctx, req, &s2)
	require.NoError(t, err)
	assert.Equal(t, "It is 18°C and sunny in Paris.", s2.Text)
	require.Len(t, reply2.Reasoning, 1)

	bodies := reqs.Bodies()
	require.Len(t, bodies, 2)
	assert.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"What is the weather in Paris?"}]},
		{"role":"assistant","content":[
			{"type":"thinking","thinking":"The user asks for the weather in Paris.\nI should call get_weather with Paris, FR.","signature":"`+signature+`"},
			{"type":"redacted_thinking","data":"`+redacted+`"},
			{"type":"tool_use","id":"toolu_01Sp6pX0zT4vM8yN1rB5eD9f","name":"get_weather","input":{"location":"Paris, FR"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_01Sp6pX0zT4vM8yN1rB5eD9f","content":[{"type":"text","text":"{\"temp_c\":18}"}]},
			{"type":"text","text":"In Celsius, please."}]}]`, member(t, bodies[1], "messages"))
}

// TestMessagesParamsPairsEveryCall: a call without a result is answered
// as an error, a result for no call is left out, results go in the calls'
// order, and base keeps its own system block.
func TestMessagesParamsPairsEveryCall(t *testing.T) {
	req := &agent.Request{System: "Be brief.", Messages: []agent.Message{
		{Role: agent.RoleUser, Text: "hi"},
		{Role: agent.RoleAssistant, Calls: []agent.Call{{ID: "toolu_1", Name: "a"}, {ID: "toolu_2", Name: "b"}}},
		{Role: agent.RoleTool, Results: []agent.Result{{CallID: "toolu_9", Output: json.RawMessage(`9`)}, {CallID: "toolu_1"}}},
		{Role: agent.RoleAssistant},
		{Role: agent.RoleUser, Text: ""},
	}}
	base := anthropic.MessageNewParams{Model: "claude-sonnet-4-5-20250929", MaxTokens: 100, System: []anthropic.TextBlockParam{{Text: "House rules."}}}
	b, err := json.Marshal(anthropicsdk.MessagesParams(req, base))
	require.NoError(t, err)
	assert.Len(t, base.System, 1, "base is not modified")
	assert.JSONEq(t, `[{"type":"text","text":"House rules."},{"type":"text","text":"Be brief."}]`, member(t, b, "system"))
	assert.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"hi"}]},
		{"role":"assistant","content":[
			{"type":"tool_use","id":"toolu_1","name":"a","input":{}},
			{"type":"tool_use","id":"toolu_2","name":"b","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_1"},
			{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"\"the tool call has no result\""}],"is_error":true}]}]`, member(t, b, "messages"))
}

// refusing is a step sink whose Delta fails.
type refusing struct{ ingestkit.Step }

var errRefused = errors.New("the host's sink refused the delta")

func (*refusing) Delta(context.Context, string) error { return errRefused }

// TestMessagesModelStepErrors: Step returns the sink's own error and ctx's,
// and nil for a provider's failure, which the sink's Fail got.
func TestMessagesModelStepErrors(t *testing.T) {
	client, _ := steps(t, "tool-then-answer-step1.sse")
	req := &agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: question}}}
	_, err := model(client).Step(context.Background(), req, &refusing{})
	assert.ErrorIs(t, err, errRefused)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var s ingestkit.Step
	_, err = model(client).Step(ctx, req, &s)
	assert.ErrorIs(t, err, context.Canceled)

	overloaded := replay(t, 529, "application/json", []byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	_, err = model(overloaded).Step(context.Background(), req, &s)
	require.NoError(t, err)
	assert.Equal(t, "fail "+string(ingest.CodeOverloaded), s.End)
}
