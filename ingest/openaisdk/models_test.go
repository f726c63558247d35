package openaisdk_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest/openaisdk"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
)

// recording reads a recorded body of testdata/providers.
func recording(t *testing.T, name string) []byte {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(providers, name))
	require.NoError(t, err)
	return body
}

// steps serves the recorded bodies, one per request, to a real client.
func steps(t *testing.T, names ...string) (*openai.Client, *ingestkit.Requests) {
	t.Helper()
	bodies := make([][]byte, len(names))
	for i, n := range names {
		bodies[i] = recording(t, n)
	}
	url, reqs := ingestkit.ServeSteps(t, bodies...)
	c := openai.NewClient(option.WithBaseURL(url), option.WithAPIKey("test"), option.WithMaxRetries(0))
	return &c, reqs
}

var tools = []agent.ToolSpec{
	{Name: "get_weather", Description: "The weather at a place.", Schema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)},
	{Name: "get_time", Schema: json.RawMessage(`{"type":"object","properties":{"tz":{"type":"string"}}}`)},
}

const question = "What is the weather and the time in Paris?"

// firstStep is the request of a turn's first step.
func firstStep() *agent.Request {
	return &agent.Request{System: "Answer briefly.", Messages: []agent.Message{{Role: agent.RoleUser, Text: question}}, Tools: tools}
}

// answer adds step and the results of its two calls (the second one
// failed) to req.
func answer(req *agent.Request, step *ingestkit.Step, reply agent.Reply) {
	req.Messages = append(req.Messages, step.Message(reply), agent.Message{Role: agent.RoleTool, Results: []agent.Result{
		{CallID: step.Calls[0].ID, Name: step.Calls[0].Name, Output: json.RawMessage(`{"temp_c":18,"sky":"sunny"}`)},
		{CallID: step.Calls[1].ID, Name: step.Calls[1].Name, Output: json.RawMessage(`"the clock is down"`), IsError: true},
	}})
}

// member decodes member name of a recorded request body.
func member(t *testing.T, body []byte, name string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &m))
	return string(m[name])
}

// TestChatModelTwoSteps: the first step asks for two tools; the second
// request carries its calls as tool_calls and each result as a tool
// message, as the Chat Completions API reference has them.
func TestChatModelTwoSteps(t *testing.T) {
	ctx := context.Background()
	client, reqs := steps(t, "openai-chat/tool-then-answer-step1.sse", "openai-chat/tool-then-answer-step2.sse")
	m := &openaisdk.ChatModel{Client: client, Params: openai.ChatCompletionNewParams{Model: "gpt-4o-2024-08-06"}}
	req := firstStep()

	var s1 ingestkit.Step
	reply, err := m.Step(ctx, req, &s1)
	require.NoError(t, err)
	assert.Equal(t, "complete tool_calls", s1.End)
	require.Len(t, s1.Calls, 2)
	assert.Empty(t, reply.Reasoning, "Chat Completions takes no reasoning back")
	answer(req, &s1, reply)

	var s2 ingestkit.Step
	_, err = m.Step(ctx, req, &s2)
	require.NoError(t, err)
	assert.Equal(t, "complete stop", s2.End)
	assert.Equal(t, "It is 18°C and sunny in Paris, and the local time is 14:05.", s2.Text)

	bodies := reqs.Bodies()
	require.Len(t, bodies, 2)
	assert.JSONEq(t, `[{"role":"system","content":"Answer briefly."},{"role":"user","content":"`+question+`"}]`, member(t, bodies[0], "messages"))
	assert.JSONEq(t, `[
		{"type":"function","function":{"name":"get_weather","description":"The weather at a place.","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}}},
		{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}}}}}]`, member(t, bodies[0], "tools"))
	assert.Equal(t, `"gpt-4o-2024-08-06"`, member(t, bodies[1], "model"))
	assert.Equal(t, `true`, member(t, bodies[1], "stream"))
	assert.JSONEq(t, `[
		{"role":"system","content":"Answer briefly."},
		{"role":"user","content":"`+question+`"},
		{"role":"assistant","tool_calls":[
			{"id":"call_R7pLmN2xQ4vT8kWz1cYb6sHd","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris, FR\"}"}},
			{"id":"call_K3dFgH8jL1mN5pQr9tVw2xYz","type":"function","function":{"name":"get_time","arguments":"{\"tz\":\"Europe/Paris\"}"}}]},
		{"role":"tool","tool_call_id":"call_R7pLmN2xQ4vT8kWz1cYb6sHd","content":"{\"temp_c\":18,\"sky\":\"sunny\"}"},
		{"role":"tool","tool_call_id":"call_K3dFgH8jL1mN5pQr9tVw2xYz","content":"{\"error\":\"the clock is down\"}"}]`, member(t, bodies[1], "messages"))
	assert.Equal(t, member(t, bodies[0], "tools"), member(t, bodies[1], "tools"))
}

// doneItems are the items of the response.output_item.done events of a
// recorded Responses body, as recorded.
func doneItems(t *testing.T, body []byte) []string {
	t.Helper()
	var items []string
	for line := range strings.Lines(string(body)) {
		data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type string
			Item json.RawMessage
		}
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
		if ev.Type == "response.output_item.done" {
			items = append(items, string(ev.Item))
		}
	}
	return items
}

// TestResponsesModelPassesReasoningBack: a step with a reasoning item and
// two function calls; the second request's input has the reasoning item
// exactly as received, before the function_call items it preceded (with
// their ids, as received), then a function_call_output per call.
func TestResponsesModelPassesReasoningBack(t *testing.T) {
	ctx := context.Background()
	client, reqs := steps(t, "openai-responses/tool-then-answer-step1.sse", "openai-responses/tool-then-answer-step2.sse")
	m := &openaisdk.ResponsesModel{Client: client, Params: responses.ResponseNewParams{Model: "o4-mini-2025-04-16", Store: openai.Bool(false), Include: []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}}}
	req := firstStep()

	var s1 ingestkit.Step
	reply, err := m.Step(ctx, req, &s1)
	require.NoError(t, err)
	assert.Equal(t, "complete ", s1.End)
	require.Len(t, s1.Calls, 2)
	items := doneItems(t, recording(t, "openai-responses/tool-then-answer-step1.sse"))
	require.Len(t, items, 3)
	require.Len(t, reply.Reasoning, 3)
	for i := range items {
		assert.Equal(t, items[i], string(reply.Reasoning[i].Item), "item %d kept as received", i)
	}
	answer(req, &s1, reply)

	var s2 ingestkit.Step
	_, err = m.Step(ctx, req, &s2)
	require.NoError(t, err)
	assert.Equal(t, "It is 18°C and sunny in Paris, and the local time is 14:05.", s2.Text)

	bodies := reqs.Bodies()
	require.Len(t, bodies, 2)
	assert.Equal(t, `"Answer briefly."`, member(t, bodies[1], "instructions"))
	assert.Equal(t, `false`, member(t, bodies[1], "store"))
	assert.JSONEq(t, `[
		{"type":"function","name":"get_weather","description":"The weather at a place.","parameters":{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]},"strict":false},
		{"type":"function","name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}}},"strict":false}]`, member(t, bodies[1], "tools"))
	var input []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(member(t, bodies[1], "input")), &input))
	require.Len(t, input, 6)
	assert.JSONEq(t, `{"role":"user","content":"`+question+`"}`, string(input[0]))
	assert.JSONEq(t, items[0], string(input[1]), "the reasoning item, exactly as received")
	assert.Contains(t, string(input[1]), `"encrypted_content":"gAAAAABocaPB7xQm2Lk9vR3nT8wZ1yFh5sJ0dK4pC6eV-encrypted-reasoning=="`)
	assert.JSONEq(t, items[1], string(input[2]))
	assert.JSONEq(t, items[2], string(input[3]))
	assert.Contains(t, string(input[2]), `"call_id":"call_W4nB8cD2eF6gH0jK3lM7pQ1r"`)
	assert.JSONEq(t, `{"type":"function_call_output","call_id":"call_W4nB8cD2eF6gH0jK3lM7pQ1r","output":"{\"temp_c\":18,\"sky\":\"sunny\"}"}`, string(input[4]))
	assert.JSONEq(t, `{"type":"function_call_output","call_id":"call_X5oC9dE3fG7hI1kL4mN8qR2s","output":"{\"error\":\"the clock is down\"}"}`, string(input[5]))
}

// TestResponsesModelWithoutReasoning: a step without reasoning keeps no
// items; the next request builds the function_call items from the calls.
func TestResponsesModelWithoutReasoning(t *testing.T) {
	ctx := context.Background()
	client, reqs := steps(t, "openai-responses/function-calls.sse", "openai-responses/text.sse")
	m := &openaisdk.ResponsesModel{Client: client, Params: responses.ResponseNewParams{Model: "gpt-4.1-2025-04-14"}}
	req := firstStep()
	var s1 ingestkit.Step
	reply, err := m.Step(ctx, req, &s1)
	require.NoError(t, err)
	assert.Empty(t, reply.Reasoning)
	require.Len(t, s1.Calls, 2)
	answer(req, &s1, reply)
	var s2 ingestkit.Step
	_, err = m.Step(ctx, req, &s2)
	require.NoError(t, err)

	var input []json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(member(t, reqs.Bodies()[1], "input")), &input))
	require.Len(t, input, 5)
	assert.JSONEq(t, `{"type":"function_call","call_id":"call_unLAR8MvFNptuiZK6K6HCy5k","name":"get_current_weather","arguments":"{\"location\":\"Boston, MA\",\"unit\":\"celsius\"}"}`, string(input[1]))
	assert.JSONEq(t, `{"type":"function_call","call_id":"call_Jd3cYQ8zK1eWqX0pB7nMt4Rv","name":"get_current_time","arguments":"{\"tz\":\"America/New_York\"}"}`, string(input[2]))
	assert.JSONEq(t, `{"type":"function_call_output","call_id":"call_unLAR8MvFNptuiZK6K6HCy5k","output":"{\"temp_c\":18,\"sky\":\"sunny\"}"}`, string(input[3]))
}
