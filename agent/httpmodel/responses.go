package httpmodel

import (
	"encoding/json"
	"errors"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/internal/modelstep"
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
// instructions, and the input items: user messages; per step the items
// of modelstep.Items (kept output items as received, its text as an
// assistant message, its function_call items), then a function_call_output
// item per call (modelstep.Results).
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
			if err := add(responsesMessage{Role: "user", Content: m.Text}); err != nil {
				return nil, err
			}
		case agent.RoleAssistant:
			var err error
			modelstep.Items(m, func(item json.RawMessage) {
				out.Input = append(out.Input, item)
			}, func(text string) {
				err = errors.Join(err, add(responsesMessage{Role: "assistant", Content: text}))
			}, func(c agent.Call) {
				err = errors.Join(err, add(responsesCall{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: string(modelstep.Input(c))}))
			})
			for _, r := range modelstep.Results(req.Messages, i) {
				err = errors.Join(err, add(responsesOutput{Type: "function_call_output", CallID: r.CallID, Output: modelstep.Content(r)}))
			}
			if err != nil {
				return nil, err
			}
		}
	}
	for _, t := range req.Tools {
		out.Tools = append(out.Tools, responsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: modelstep.Schema(t)})
	}
	return json.Marshal(&out)
}
