package chatprotocol

import (
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// cardResponseNames are the members of a cards.CardResponse (docs/contract.md section 3).
var cardResponseNames = []string{"action", "correlationId", "value"}

// ParseCardResponse reads a person's answer to a card, the JSON object
// {"action":"submit","correlationId":ID,"value":{…}}, {"action":"decline",
// "correlationId":ID} or {"action":"cancel","correlationId":ID}
// (docs/contract.md section 3), as strictly as [ParseEnvelope] reads a frame
// (docs/contract.md section 5), so that the host and every later reader of
// the answer see one meaning. It is what a host's answer endpoint reads a
// request body with, in place of encoding/json, which matches "ACTION" to
// action, keeps the last of duplicated names and replaces invalid UTF-8.
//
// The refusals, each an *Error with a JSON pointer into data:
//
//   - frame-too-large: data longer than [DefaultMaxFrameBytes] (1 MiB, the
//     frame limit of docs/contract.md section 5), refused before it is read.
//   - invalid-card, at the offending member: data that is not one JSON
//     object; a duplicated member name or invalid UTF-8 at any depth;
//     nesting deeper than [DefaultMaxDepth] (64, the response object counting
//     as 1); a member name that differs from action, correlationId or value
//     only by case (Unicode simple folding: "ACTION", "ſalue"); inside the
//     value, two names of one object that differ only by case, which a
//     case-folding decoder of the host would read as one; an action or
//     correlationId that is not a string.
//   - invalid-card, as a [CardViolations] listing every violation (see
//     [ValidateCardResponse]): an action other than submit, decline or
//     cancel (/action); a missing or empty correlationId
//     (/correlationId); a submit without a value, or whose value is not a
//     JSON object, and a decline or cancel with a value, null included
//     (/value).
//
// [errors.Is](err, [refusal.ErrInvalidCard]) holds for every refusal but
// frame-too-large, and [refusal.CodeOf](err) gives the code of each. Other members
// are ignored (docs/contract.md section 5), after the checks above.
//
// The returned response does not refer to data: its strings share one copy
// of it, and Value is a copy of its own of the value's bytes as they were
// sent (whitespace included). It is zero with a refusal.
// ParseCardResponse never panics and is safe for concurrent use; its work
// is linear in len(data).
func ParseCardResponse(data []byte) (cards.CardResponse, error) {
	if len(data) > DefaultMaxFrameBytes {
		return cards.CardResponse{}, refusef(refusal.CodeFrameTooLarge, "", "card response of %d bytes exceeds the limit of %d", len(data), DefaultMaxFrameBytes)
	}
	d := strictjson.Get(data, string(data), 0, 0, DefaultMaxDepth)
	defer strictjson.Put(d)
	r := reader{d: d, maxDepth: DefaultMaxDepth, whole: refusal.CodeInvalidCard}
	resp, err := r.cardResponse()
	if err != nil {
		return cards.CardResponse{}, err
	}
	if err := ValidateCardResponse(resp); err != nil {
		return cards.CardResponse{}, err
	}
	return resp, nil
}

// cardResponse reads the response object and checks the value's member
// names for case collisions; the shape rules are ValidateCardResponse's.
func (r *reader) cardResponse() (cards.CardResponse, error) {
	var resp cards.CardResponse
	err := r.d.Begin('{')
	if err == strictjson.ErrWrongType {
		return resp, refusef(refusal.CodeInvalidCard, "", "a card response is one JSON object")
	}
	if err != nil {
		return resp, r.fail(err, refusal.CodeInvalidCard, "", "")
	}
	var ignored []Member
	err = r.members(refusal.CodeInvalidCard, "", cardResponseNames, &ignored, func(name []byte) (bool, error) {
		switch string(name) {
		case "action":
			var action string
			err := r.str(&action, refusal.CodeInvalidCard, "", "action")
			resp.Action = cards.CardAction(action)
			return true, err
		case "correlationId":
			return true, r.str(&resp.CorrelationID, refusal.CodeInvalidCard, "", "correlationId")
		case "value":
			return true, r.raw((*[]byte)(&resp.Value), refusal.CodeInvalidCard, "", "value")
		}
		return false, nil
	})
	if err != nil {
		return resp, err
	}
	if err := r.d.Finish(); err != nil {
		return resp, r.fail(err, refusal.CodeInvalidCard, "", "")
	}
	if resp.Value != nil {
		p, found, err := foldCollision(resp.Value, nil)
		if err != nil {
			return resp, refuseWrap(refusal.CodeInvalidCard, "/value", "not one strict JSON value", err)
		}
		if found {
			return resp, refusef(refusal.CodeInvalidCard, "/value"+p, "member name differs from another name of the object only by case")
		}
	}
	return resp, nil
}
