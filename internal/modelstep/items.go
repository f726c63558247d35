package modelstep

import (
	"encoding/json"
	"slices"

	"github.com/Papercusp/chat-protocol-go/agent"
)

// Items is how an assistant step goes back to the Responses API
// (docs/contract.md section 19.3): the output items a step with reasoning
// kept, exactly as received and in order (a kept function_call only for a
// call the step still has), then an assistant message of its text unless a
// kept message item carries it, then a function_call per call no kept item
// carries. It calls kept, text and call in that order.
func Items(m *agent.Message, kept func(item json.RawMessage), text func(string), call func(agent.Call)) {
	var sent []bool // the calls a kept item carries
	says := m.Text != ""
	for _, r := range m.Reasoning {
		if len(r.Item) == 0 {
			continue
		}
		var probe struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
		}
		if json.Unmarshal(r.Item, &probe) != nil {
			continue
		}
		switch probe.Type {
		case "function_call":
			k := slices.IndexFunc(m.Calls, func(c agent.Call) bool { return c.ID == probe.CallID })
			if k < 0 {
				continue // not a call of the step as the conversation has it
			}
			if sent == nil {
				sent = make([]bool, len(m.Calls))
			}
			sent[k] = true
		case "message":
			says = false
		}
		kept(r.Item)
	}
	if says {
		text(m.Text)
	}
	for k, c := range m.Calls {
		if sent == nil || !sent[k] {
			call(c)
		}
	}
}
