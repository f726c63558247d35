package conversation

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/agent"
)

// noResult is the output of a call that never got its result (its turn
// ended first), as the model reads it: a tool message answers every call.
var noResult = json.RawMessage(`"the call has no result: its turn ended before it"`)

// Messages returns the history as a model's next request reads it
// (docs/contract.md section 20.3): for each turn in order, the user's
// message with its text; then, for an ended turn with text or tool calls,
// one assistant message (the turn's text and its calls, in order) and,
// when it made calls, one tool message with a result per call in the
// same order: the call's output, IsError for a status other than ok, and
// for a call without a result an error saying so. The running turn gives
// its user message only. A stored state that cannot be read is its error
// ([Turn.Reduce]).
func (h History) Messages() ([]agent.Message, error) {
	msgs := make([]agent.Message, 0, 3*len(h.Turns))
	err := h.Each(func(t Turn, r *Reduced) {
		msgs = append(msgs, agent.Message{Role: agent.RoleUser, Text: t.UserText})
		if r != nil {
			msgs = append(msgs, assistantOf(*r)...)
		}
	})
	return msgs, err
}

// Each calls fn for each turn of the history in order, with the turn's
// reduced state when the turn ended with text or tool calls, else nil (the
// running turn, a turn that said nothing): the walk every format of the
// history makes ([History.Messages], uistream's and agui's). A stored state
// that cannot be read stops the walk and is its error ([Turn.Reduce]).
func (h History) Each(fn func(t Turn, r *Reduced)) error {
	for _, t := range h.Turns {
		if !t.Ended() {
			fn(t, nil)
			continue
		}
		r, err := t.Reduce()
		if err != nil {
			return err
		}
		if r.Text == "" && len(r.ToolCalls) == 0 {
			fn(t, nil)
			continue
		}
		fn(t, &r)
	}
	return nil
}

// assistantOf is an ended turn's assistant message and, when it made
// calls, its tool message.
func assistantOf(r Reduced) []agent.Message {
	a := agent.Message{Role: agent.RoleAssistant, Text: r.Text}
	if len(r.ToolCalls) == 0 {
		return []agent.Message{a}
	}
	tool := agent.Message{Role: agent.RoleTool, Results: make([]agent.Result, len(r.ToolCalls))}
	a.Calls = make([]agent.Call, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		a.Calls[i] = agent.Call{ID: c.CallID, Name: c.Name, Input: c.Input}
		res := agent.Result{CallID: c.CallID, Name: c.Name, Output: c.Output, IsError: c.Status != "ok"}
		if c.Status == "pending" {
			res.Output = noResult
		}
		tool.Results[i] = res
	}
	return []agent.Message{a, tool}
}
