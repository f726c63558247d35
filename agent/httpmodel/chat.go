package httpmodel

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/internal/modelstep"
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
		Content    *string        `json:"content,omitempty"`
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
// message, user messages, an assistant message per step (its text, none
// when it has none but calls, and its tool_calls), and a tool message per call right
// after it (modelstep.Results: a call without a result answered as an error).
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
				tc.Function.Arguments = string(modelstep.Input(c))
				am.ToolCalls = append(am.ToolCalls, tc)
			}
			out.Messages = append(out.Messages, am)
			for _, r := range modelstep.Results(req.Messages, i) {
				text := modelstep.Content(r)
				out.Messages = append(out.Messages, chatMessage{Role: "tool", Content: &text, ToolCallID: r.CallID})
			}
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, chatTool{Type: "function", Function: chatFunction{Name: t.Name, Description: t.Description, Parameters: modelstep.Schema(t)}})
	}
	return json.Marshal(&out)
}
