package agui

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/conversation"
)

// message is an AG-UI 1.x message of a MESSAGES_SNAPSHOT: user,
// assistant or tool.
type message struct {
	ID         string     `json:"id"`
	Role       string     `json:"role"`
	Content    *string    `json:"content,omitempty"`
	ToolCalls  []toolCall `json:"toolCalls,omitempty"`
	ToolCallID string     `json:"toolCallId,omitempty"`
	Error      string     `json:"error,omitempty"`
}

// toolCall is an assistant message's tool call: {id, type: "function",
// function: {name, arguments}}, arguments the input's JSON text.
type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

// toolFunction is a tool call's function: its name and arguments.
type toolFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// MessagesSnapshot returns a conversation's history as an AG-UI
// MESSAGES_SNAPSHOT event, {"type":"MESSAGES_SNAPSHOT","messages":[…]},
// which a host sends a client that reconnects to a thread
// (docs/contract.md section 20.3): for each turn the user's message (id
// <turnId>-user, its text as content) and, once the turn ended with text
// or tool calls, the assistant's (id the turn id, the turn's text as
// content when there is any, its tool calls with the input's JSON text as
// arguments, "{}" when absent), then a tool message per call (id
// <callId>-result and content the output's JSON text, as the stream's
// TOOL_CALL_RESULT; error the status for an error or a cancel, and for a
// call without a result). The running turn gives its user message only. A
// stored state that cannot be read is its error.
func MessagesSnapshot(h conversation.History) (json.RawMessage, error) {
	msgs := make([]message, 0, 2*len(h.Turns))
	err := h.Each(func(t conversation.Turn, r *conversation.Reduced) {
		msgs = append(msgs, message{ID: t.ID + "-user", Role: "user", Content: &t.UserText})
		if r == nil {
			return
		}
		a := message{ID: t.ID, Role: "assistant"}
		if r.Text != "" {
			a.Content = &r.Text
		}
		var results []message
		for _, c := range r.ToolCalls {
			args := "{}"
			if c.Input != nil {
				args = string(c.Input)
			}
			a.ToolCalls = append(a.ToolCalls, toolCall{ID: c.CallID, Type: "function", Function: toolFunction{Name: c.Name, Arguments: args}})
			content := string(c.Output)
			res := message{ID: c.CallID + "-result", Role: "tool", Content: &content, ToolCallID: c.CallID}
			switch c.Status {
			case "ok":
			case "pending":
				res.Error = "the call has no result: its turn ended before it"
			default:
				res.Error = "the tool call " + c.Status
			}
			results = append(results, res)
		}
		msgs = append(msgs, a)
		msgs = append(msgs, results...)
	})
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Type     string    `json:"type"`
		Messages []message `json:"messages"`
	}{"MESSAGES_SNAPSHOT", msgs})
}
