package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/interactions"
)

// Tool is a tool a [Loop] offers its model (docs/contract.md section
// 19.2): its Spec, what runs a call of it, and, optionally, the card a
// person answers before a call goes on.
//
// Run gets the call's JSON input (nil: none) under the turn's context,
// which the turn's cancellation ends. It returns the call's JSON output
// (status ok), or a [*turn.ToolError] for a definite outcome other than
// ok, which the model reads as an error [Result]. Any other error means
// the outcome is unknown: the call needs reconciliation and the loop
// stops (docs/contract.md section 13.1); no tool is ever run twice.
//
// Card, when set, is asked for each call: it returns the card a person
// answers before the call goes on, and false for a call that needs none.
// With Run set the card is an approval: a submitted answer runs the call,
// any other end (declined, cancelled, expired, superseded) answers it to
// the model as an error Result. With Run nil the tool asks the user: the
// submitted answer's value is the call's output. The card's
// Key.CorrelationID "" means the loop's own id for the call ([CardID]),
// which a resumed turn finds again; Key.Conversation "" means the turn's.
type Tool struct {
	Spec ToolSpec
	Run  func(ctx context.Context, input json.RawMessage) (json.RawMessage, error)
	Card func(call Call) (interactions.NewCard, bool)
}

// CardID is the correlation id of the card the loop opens for a call of
// turnID: "<turnID>/<callID>", or, when that is longer than
// [interactions.MaxIDBytes], "call-" and the hex SHA-256 of it. The same
// call of the same turn always gets the same id, also after a restart.
func CardID(turnID, callID string) string {
	id := turnID + "/" + callID
	if len(id) <= interactions.MaxIDBytes {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "call-" + hex.EncodeToString(sum[:])
}
