package openaisdk_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest/openaisdk"
)

// unpaired is a conversation whose tool message answers its step's calls
// out of order, leaves one out and answers a call of no step.
func unpaired() *agent.Request {
	return &agent.Request{Messages: []agent.Message{
		{Role: agent.RoleUser, Text: "hi"},
		{Role: agent.RoleAssistant, Text: "Looking.", Calls: []agent.Call{
			{ID: "call_1", Name: "a", Input: json.RawMessage(`{"x":1}`)},
			{ID: "call_2", Name: "b"},
			{ID: "call_3", Name: "c"},
		}},
		{Role: agent.RoleTool, Results: []agent.Result{
			{CallID: "call_3", Name: "c", Output: json.RawMessage(`3`)},
			{CallID: "call_9", Name: "z", Output: json.RawMessage(`9`)},
			{CallID: "call_1", Name: "a"},
		}},
		{Role: agent.RoleAssistant}, // an empty step
		{Role: agent.RoleUser, Text: "thanks"},
	}}
}

// TestChatParamsPairsEveryCall: one tool message per call, in the calls'
// order, right after the step; a call without a result is answered as an
// error, a result for no call is left out, an empty step too, and base
// keeps its own tools.
func TestChatParamsPairsEveryCall(t *testing.T) {
	req := unpaired()
	req.Tools = []agent.ToolSpec{{Name: "a"}}
	base := openai.ChatCompletionNewParams{Model: "gpt-4o", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("dropped")}}
	base.Tools = make([]openai.ChatCompletionToolUnionParam, 0, 4) // room that must not be written
	p := openaisdk.ChatParams(req, base)
	assert.Nil(t, base.Tools[:1][0].OfFunction, "base's spare room is not written")
	assert.Len(t, base.Messages, 1, "base is not modified")
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.JSONEq(t, `[
		{"role":"user","content":"hi"},
		{"role":"assistant","content":"Looking.","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"a","arguments":"{\"x\":1}"}},
			{"id":"call_2","type":"function","function":{"name":"b","arguments":"{}"}},
			{"id":"call_3","type":"function","function":{"name":"c","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"null"},
		{"role":"tool","tool_call_id":"call_2","content":"{\"error\":\"the tool call has no result\"}"},
		{"role":"tool","tool_call_id":"call_3","content":"3"},
		{"role":"user","content":"thanks"}]`, member(t, b, "messages"))
	assert.JSONEq(t, `[{"type":"function","function":{"name":"a","parameters":{"type":"object","properties":{}}}}]`, member(t, b, "tools"))
}

// TestResponsesParamsPairsEveryCall: the same pairing as function_call and
// function_call_output items.
func TestResponsesParamsPairsEveryCall(t *testing.T) {
	p := openaisdk.ResponsesParams(unpaired(), responses.ResponseNewParams{Model: "gpt-4.1", Instructions: openai.String("kept")})
	b, err := json.Marshal(p)
	require.NoError(t, err)
	assert.Equal(t, `"kept"`, member(t, b, "instructions"))
	assert.JSONEq(t, `[
		{"role":"user","content":"hi"},
		{"role":"assistant","content":"Looking."},
		{"type":"function_call","call_id":"call_1","name":"a","arguments":"{\"x\":1}"},
		{"type":"function_call","call_id":"call_2","name":"b","arguments":"{}"},
		{"type":"function_call","call_id":"call_3","name":"c","arguments":"{}"},
		{"type":"function_call_output","call_id":"call_1","output":"null"},
		{"type":"function_call_output","call_id":"call_2","output":"{\"error\":\"the tool call has no result\"}"},
		{"type":"function_call_output","call_id":"call_3","output":"3"},
		{"role":"user","content":"thanks"}]`, member(t, b, "input"))
}

// TestResponsesParamsKeptItems: kept items go as received, in order; a kept
// function_call of no call of the step is left out, a call no kept item
// carries is built, and a kept message item stands for the text.
func TestResponsesParamsKeptItems(t *testing.T) {
	rs := `{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"enc"}`
	msg := `{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"On it."}]}`
	fc := `{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"a","arguments":"{}"}`
	stray := `{"id":"fc_9","type":"function_call","status":"completed","call_id":"call_9","name":"z","arguments":"{}"}`
	req := &agent.Request{Messages: []agent.Message{
		{Role: agent.RoleAssistant, Text: "On it.", Calls: []agent.Call{{ID: "call_1", Name: "a"}, {ID: "call_2", Name: "b"}}, Reasoning: []agent.Reasoning{
			{Item: json.RawMessage(rs)}, {Item: json.RawMessage(msg)}, {Item: json.RawMessage(fc)}, {Item: json.RawMessage(stray)},
		}},
		{Role: agent.RoleTool, Results: []agent.Result{{CallID: "call_1", Output: json.RawMessage(`1`)}, {CallID: "call_2", Output: json.RawMessage(`2`)}}},
	}}
	b, err := json.Marshal(openaisdk.ResponsesParams(req, responses.ResponseNewParams{Model: "o4-mini"}))
	require.NoError(t, err)
	assert.JSONEq(t, `[`+rs+`,`+msg+`,`+fc+`,
		{"type":"function_call","call_id":"call_2","name":"b","arguments":"{}"},
		{"type":"function_call_output","call_id":"call_1","output":"1"},
		{"type":"function_call_output","call_id":"call_2","output":"2"}]`, member(t, b, "input"))
}
