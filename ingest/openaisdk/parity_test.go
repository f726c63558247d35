package openaisdk_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/agent/httpmodel"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/ingest/openaisdk"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
)

// parityRequest is a conversation with every case the builders pair:
// ok, error and missing results, a result of no call, text-less steps.
func parityRequest() *agent.Request {
	req := ingestkit.Conversation(3, nil)
	req.Messages = append(req.Messages,
		agent.Message{Role: agent.RoleAssistant, Calls: []agent.Call{{ID: "call_x", Name: "get_weather"}, {ID: "call_y", Name: "get_time", Input: json.RawMessage(`{"tz":"UTC"}`)}}},
		agent.Message{Role: agent.RoleTool, Results: []agent.Result{{CallID: "call_y", Name: "get_time", Output: json.RawMessage(`"no clock"`), IsError: true}, {CallID: "call_z", Name: "nope"}}},
		agent.Message{Role: agent.RoleUser, Text: "Thanks."})
	return req
}

// members decodes b and returns the named members.
func members(t *testing.T, b []byte, names ...string) map[string]any {
	t.Helper()
	var all map[string]any
	require.NoError(t, json.Unmarshal(b, &all))
	out := map[string]any{}
	for _, n := range names {
		out[n] = all[n]
	}
	return out
}

// The model without an SDK (agent/httpmodel) and the SDK's builders write
// the same conversation: two implementations, one reading of section 19.3.
func TestChatParamsAndHTTPModelWriteTheSameRequest(t *testing.T) {
	req := parityRequest()
	sdk, err := json.Marshal(openaisdk.ChatParams(req, openai.ChatCompletionNewParams{Model: "m"}))
	require.NoError(t, err)
	raw, err := httpmodel.Body(ingest.OpenAIChat, "m", 0, req)
	require.NoError(t, err)
	assert.Equal(t, members(t, sdk, "model", "messages", "tools"), members(t, raw, "model", "messages", "tools"))
}

func TestResponsesParamsAndHTTPModelWriteTheSameRequest(t *testing.T) {
	req := parityRequest()
	req.Messages[1].Reasoning = []agent.Reasoning{{Item: json.RawMessage(`{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"e"}`)}}
	sdk, err := json.Marshal(openaisdk.ResponsesParams(req, responses.ResponseNewParams{Model: "m"}))
	require.NoError(t, err)
	raw, err := httpmodel.Body(ingest.OpenAIResponses, "m", 0, req)
	require.NoError(t, err)
	assert.Equal(t, members(t, sdk, "model", "instructions", "input", "tools"), members(t, raw, "model", "instructions", "input", "tools"))
}
