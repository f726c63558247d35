package modelstep

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/agent"
)

// noResult is the output of a call the conversation left without a result.
var noResult = json.RawMessage(`"the tool call has no result"`)

// Results returns the results answering the calls of msgs[i], an assistant
// message, one per call and in the calls' order, as every provider requires
// them right after the step: those of the tool message right after it,
// matched by call id; a call without one gets an error result saying so, and
// a result for no call of the step is left out. It returns that tool
// message's own Results when they already answer the calls in order.
func Results(msgs []agent.Message, i int) []agent.Result {
	calls := msgs[i].Calls
	if len(calls) == 0 {
		return nil
	}
	var got []agent.Result
	if i+1 < len(msgs) && msgs[i+1].Role == agent.RoleTool {
		got = msgs[i+1].Results
	}
	if inOrder(calls, got) {
		return got
	}
	out := make([]agent.Result, len(calls))
	for k, c := range calls {
		out[k] = agent.Result{CallID: c.ID, Name: c.Name, Output: noResult, IsError: true}
		for _, r := range got {
			if r.CallID == c.ID {
				out[k] = r
				break
			}
		}
	}
	return out
}

// inOrder reports whether results answer calls one by one, in order.
func inOrder(calls []agent.Call, results []agent.Result) bool {
	if len(calls) != len(results) {
		return false
	}
	for k := range calls {
		if calls[k].ID != results[k].CallID {
			return false
		}
	}
	return true
}
