package httpmodel

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/agent"
)

// The Responses request (docs/contract.md section 19.3).
type (
	responsesRequest struct {
		Model           string            `json:"model"`
		Instructions    string            `json:"instructions,omitempty"`
		Input           []json.RawMessage `json:"input"`
		Tools           []responsesTool   `json:"tools,omitempty"`
		MaxOutputTokens int               `json:"max_output_tokens,omitempty"`
		Stream          bool              `json:"stream"`
	}
	responsesMessage struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	responsesCall struct {
		Type      string `json:"type"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	responsesOutput struct {
		Type   string `json:"type"`
		CallID string `json:"call_id"`
		Output string `json:"output"`
	}
	responsesTool struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      bool            `json:"strict"`
	}
)

// responsesBody writes the Responses request of req: the system text as
// instructions, and the input items: user messages; per step its reasoning
// items as received, its text as an assistant message, its function_call
// items; a function_call_output item per result.
func responsesBody(model string, maxTokens int, req *agent.Request) ([]byte, error) {
	out := responsesRequest{Model: model, Instructions: req.System, MaxOutputTokens: maxTokens, Stream: true, Input: []json.RawMessage{}}
	add := func(v any) error {
		b, err := json.Marshal(v)
		out.Input = append(out.Input, b)
		return err
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case agent.RoleUser:
			if err := add(responsesMessage{Type: "message", Role: "user", Content: m.Text}); err != nil {
				return nil, err
			}
		case agent.RoleAssistant:
			for _, r := range m.Reasoning {
				if len(r.Item) > 0 {
					out.Input = append(out.Input, r.Item)
				}
			}
			if m.Text != "" {
				if err := add(responsesMessage{Type: "message", Role: "assistant", Content: m.Text}); err != nil {
					return nil, err
				}
			}
			for _, c := range m.Calls {
				if err := add(responsesCall{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: string(input(c))}); err != nil {
					return nil, err
				}
			}
		case agent.RoleTool:
			for _, r := range m.Results {
				text, err := outputText(r)
				if err != nil {
					return nil, err
				}
				if err := add(responsesOutput{Type: "function_call_output", CallID: r.CallID, Output: text}); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, responsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: schema(t)})
	}
	return json.Marshal(&out)
}
