package anthropicsdk_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/agent/httpmodel"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/ingest/anthropicsdk"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
)

// The model without an SDK (agent/httpmodel) and MessagesParams write the
// same conversation: two implementations, one reading of section 19.3.
func TestMessagesParamsAndHTTPModelWriteTheSameRequest(t *testing.T) {
	req := ingestkit.Conversation(3, []agent.Reasoning{{Text: "Both tools.", Signature: "sig"}, {Redacted: "opaque"}})
	req.System = "" // MessagesParams writes the system text as blocks, httpmodel as a string: both are the API's
	req.Messages = append(req.Messages,
		agent.Message{Role: agent.RoleAssistant, Calls: []agent.Call{{ID: "toolu_x", Name: "get_weather"}, {ID: "toolu_y", Name: "get_time", Input: json.RawMessage(`{"tz":"UTC"}`)}}},
		agent.Message{Role: agent.RoleTool, Results: []agent.Result{{CallID: "toolu_y", Name: "get_time", Output: json.RawMessage(`"no clock"`), IsError: true}, {CallID: "toolu_z", Name: "nope"}}},
		agent.Message{Role: agent.RoleUser, Text: "Thanks."})
	sdk, err := json.Marshal(anthropicsdk.MessagesParams(req, anthropic.MessageNewParams{Model: "m", MaxTokens: 100}))
	require.NoError(t, err)
	raw, err := httpmodel.Body(ingest.AnthropicMessages, "m", 100, req)
	require.NoError(t, err)
	pick := func(b []byte) map[string]any {
		var all map[string]any
		require.NoError(t, json.Unmarshal(b, &all))
		return map[string]any{"model": all["model"], "max_tokens": all["max_tokens"], "messages": all["messages"], "tools": all["tools"]}
	}
	assert.Equal(t, pick(sdk), pick(raw))
}
