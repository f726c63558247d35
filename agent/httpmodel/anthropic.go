package httpmodel

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/internal/modelstep"
)

// The Messages request (docs/contract.md section 19.3).
type (
	anthropicRequest struct {
		Model     string             `json:"model"`
		MaxTokens int                `json:"max_tokens"`
		System    string             `json:"system,omitempty"`
		Messages  []anthropicMessage `json:"messages"`
		Tools     []anthropicTool    `json:"tools,omitempty"`
		Stream    bool               `json:"stream"`
	}
	anthropicMessage struct {
		Role    string           `json:"role"`
		Content []anthropicBlock `json:"content"`
	}
	// anthropicBlock is one content block; its type says which members
	// it has.
	anthropicBlock struct {
		Type      string           `json:"type"`
		Text      *string          `json:"text,omitempty"`
		Thinking  *string          `json:"thinking,omitempty"`
		Signature string           `json:"signature,omitempty"`
		Data      string           `json:"data,omitempty"`
		ID        string           `json:"id,omitempty"`
		Name      string           `json:"name,omitempty"`
		Input     json.RawMessage  `json:"input,omitempty"`
		ToolUseID string           `json:"tool_use_id,omitempty"`
		Content   []anthropicBlock `json:"content,omitempty"`
		IsError   bool             `json:"is_error,omitempty"`
	}
	anthropicTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
)

// anthropicBody writes the Messages request of req: the system text, a user
// message per user text, an assistant message per step (its thinking
// blocks with their signatures, redacted thinking, its text, its tool_use
// blocks), and a tool_result block per call (modelstep.Results: its output's
// JSON text as a text block) at the head of the next user message, which
// the API requires of every tool_use. Messages of
// one role in a row are merged into one, and a message left empty is
// dropped, since the API refuses both.
func anthropicBody(model string, maxTokens int, req *agent.Request) ([]byte, error) {
	out := anthropicRequest{Model: model, MaxTokens: maxTokens, System: req.System, Stream: true, Messages: []anthropicMessage{}}
	push := func(role string, blocks []anthropicBlock) {
		if len(blocks) == 0 {
			return
		}
		if n := len(out.Messages); n > 0 && out.Messages[n-1].Role == role {
			out.Messages[n-1].Content = append(out.Messages[n-1].Content, blocks...)
			return
		}
		out.Messages = append(out.Messages, anthropicMessage{Role: role, Content: blocks})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		var blocks []anthropicBlock
		switch m.Role {
		case agent.RoleUser:
			if m.Text != "" {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: &m.Text})
			}
			push("user", blocks)
		case agent.RoleAssistant:
			for j := range m.Reasoning {
				r := &m.Reasoning[j]
				switch {
				case r.Redacted != "":
					blocks = append(blocks, anthropicBlock{Type: "redacted_thinking", Data: r.Redacted})
				case r.Signature != "" || r.Text != "":
					blocks = append(blocks, anthropicBlock{Type: "thinking", Thinking: &r.Text, Signature: r.Signature})
				}
			}
			if m.Text != "" {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: &m.Text})
			}
			for _, c := range m.Calls {
				blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: modelstep.Input(c)})
			}
			push("assistant", blocks)
			var results []anthropicBlock
			for _, r := range modelstep.Results(req.Messages, i) {
				b := anthropicBlock{Type: "tool_result", ToolUseID: r.CallID, IsError: r.IsError}
				if len(r.Output) > 0 {
					b.Content = []anthropicBlock{{Type: "text", Text: new(string(r.Output))}}
				}
				results = append(results, b)
			}
			push("user", results)
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, anthropicTool{Name: t.Name, Description: t.Description, InputSchema: modelstep.Schema(t)})
	}
	return json.Marshal(&out)
}
