package conversation

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Reduced is what the history builders read of an ended turn's stored
// state (the members of docs/contract.md section 7.1 they need): its
// status and reason, its text, its tool calls with their results, and
// its error event.
type Reduced struct {
	TurnID    string        `json:"turnId"`
	Status    string        `json:"status"`
	Text      string        `json:"text"`
	ToolCalls []ReducedCall `json:"toolCalls"`
	Error     *ReducedError `json:"error,omitempty"`
	Reason    string        `json:"reason,omitempty"`
}

// ReducedCall is one tool call of a [Reduced] turn: Status is pending
// (no result), ok, error or cancelled; Input and Output are nil when
// absent.
type ReducedCall struct {
	CallID string          `json:"callId"`
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input,omitempty"`
	Status string          `json:"status"`
	Output json.RawMessage `json:"output,omitempty"`
}

// ReducedError is a [Reduced] turn's error event: its code and message.
type ReducedError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Reduce reads the turn's stored state. A turn still running is
// turn-not-running; stored bytes that are not a turn's JSON form are
// store-unavailable (the store returned what no EndTurn wrote).
func (t Turn) Reduce() (Reduced, error) {
	var r Reduced
	if !t.Ended() {
		return r, refusal.New(refusal.CodeTurnNotRunning, "", "conversation: the turn has no reduced state yet")
	}
	if err := json.Unmarshal(t.State, &r); err != nil {
		return r, refusal.Wrap(refusal.CodeStoreUnavailable, "", "conversation: a stored turn state is not a turn's JSON form", err)
	}
	return r, nil
}
