package uistream

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/conversation"
)

// historyMessage is a UIMessage of the ai package: {id, role, parts}.
type historyMessage struct {
	ID    string `json:"id"`
	Role  string `json:"role"`
	Parts []any  `json:"parts"`
}

// historyText is a UIMessage text part, done.
type historyText struct {
	Type  string `json:"type"`
	Text  string `json:"text"`
	State string `json:"state"`
}

// historyStep is a UIMessage step-start part.
type historyStep struct {
	Type string `json:"type"`
}

// historyTool is a UIMessage static tool part, tool-<name>: input-available
// (no result), output-available or output-error.
type historyTool struct {
	Type       string          `json:"type"`
	ToolCallID string          `json:"toolCallId"`
	State      string          `json:"state"`
	Input      json.RawMessage `json:"input"`
	Output     json.RawMessage `json:"output,omitempty"`
	ErrorText  string          `json:"errorText,omitempty"`
}

// HistoryMessages returns a conversation's history as the ai package's
// UIMessage[] JSON, what its validateUIMessages accepts and useChat's
// messages option takes (docs/contract.md section 20.3): for each turn the
// user's message (id <turnId>-user, one text part) and, once the turn
// ended with text or tool calls, the assistant's (id the turn id, as the
// stream's start chunk names it by default): a step-start part, the turn's
// text as one text part, then a tool-<name> part per call, its input
// (null when absent) and, by its status, output-available with its output
// (null when absent), output-error with the errorText the stream writes,
// or input-available without a result. The running turn gives its user
// message only: its assistant message comes with the resumed stream. A
// stored state that cannot be read is its error.
func HistoryMessages(h conversation.History) (json.RawMessage, error) {
	msgs := make([]historyMessage, 0, 2*len(h.Turns))
	err := h.Each(func(t conversation.Turn, r *conversation.Reduced) {
		msgs = append(msgs, historyMessage{ID: t.ID + "-user", Role: "user", Parts: []any{historyText{Type: "text", Text: t.UserText, State: "done"}}})
		if r == nil {
			return
		}
		parts := []any{historyStep{Type: "step-start"}}
		if r.Text != "" {
			parts = append(parts, historyText{Type: "text", Text: r.Text, State: "done"})
		}
		for _, c := range r.ToolCalls {
			p := historyTool{Type: "tool-" + c.Name, ToolCallID: c.CallID, Input: orNull(c.Input)}
			switch c.Status {
			case "ok":
				p.State, p.Output = "output-available", orNull(c.Output)
			case "pending":
				p.State = "input-available"
			default:
				p.State, p.ErrorText = "output-error", errorText(c.Status, c.Output)
			}
			parts = append(parts, p)
		}
		msgs = append(msgs, historyMessage{ID: t.ID, Role: "assistant", Parts: parts})
	})
	if err != nil {
		return nil, err
	}
	return json.Marshal(msgs)
}
