package httpmodel

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/agent"
)

// The Chat Completions request (docs/contract.md section 19.3).
type (
	chatRequest struct {
		Model               string        `json:"model"`
		Messages            []chatMessage `json:"messages"`
		Tools               []chatTool    `json:"tools,omitempty"`
		MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
		Stream              bool          `json:"stream"`
		StreamOptions       struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	chatMessage struct {
		Role       string         `json:"role"`
		Content    *string        `json:"content"`
		ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	chatToolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	chatTool struct {
		Type     string       `json:"type"`
		Function chatFunction `json:"function"`
	}
	chatFunction struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
)

// chatBody writes the Chat Completions request of req: the system
// message, user messages, an assistant message per step (its text, null
// when it has none, and its tool_calls), and a tool message per result.
func chatBody(model string, maxTokens int, req *agent.Request) ([]byte, error) {
	out := chatRequest{Model: model, MaxCompletionTokens: maxTokens, Stream: true}
	out.StreamOptions.IncludeUsage = true
	if req.System != "" {
		out.Messages = append(out.Messages, chatMessage{Role: "system", Content: &req.System})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case agent.RoleUser:
			out.Messages = append(out.Messages, chatMessage{Role: "user", Content: &m.Text})
		case agent.RoleAssistant:
			am := chatMessage{Role: "assistant"}
			if m.Text != "" || len(m.Calls) == 0 {
				am.Content = &m.Text
			}
			for _, c := range m.Calls {
				tc := chatToolCall{ID: c.ID, Type: "function"}
				tc.Function.Name = c.Name
				tc.Function.Arguments = string(input(c))
				am.ToolCalls = append(am.ToolCalls, tc)
			}
			out.Messages = append(out.Messages, am)
		case agent.RoleTool:
			for _, r := range m.Results {
				text, err := outputText(r)
				if err != nil {
					return nil, err
				}
				out.Messages = append(out.Messages, chatMessage{Role: "tool", Content: &text, ToolCallID: r.CallID})
			}
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, chatTool{Type: "function", Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: schema(t)}})
	}
	return json.Marshal(&out)
}
