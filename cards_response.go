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
// "correlationId":ID} or {"action":"cancel","correlationId":ID}, as
// strictly as [ParseEnvelope] reads a frame (docs/contract.md section 3.3).
// A host's answer endpoint reads a request body with it.
//
// The refusals, each a [*refusal.Error] with a JSON pointer into data:
//
//   - frame-too-large: data longer than [DefaultMaxFrameBytes], refused
//     before it is read;
//   - invalid-card, at the offending member: not one JSON object; a
//     duplicated name or invalid UTF-8 at any depth; nesting deeper than
//     [DefaultMaxDepth] (the response counting as 1); a name that differs
//     from action, correlationId or value only by case; inside the value,
//     two names of one object that differ only by case; an action or
//     correlationId that is not a string;
//   - invalid-card, as a [CardViolations] listing every violation of
//     [ValidateCardResponse]'s shape rules (docs/contract.md section 3.5).
//
// [errors.Is](err, [refusal.ErrInvalidCard]) holds for every refusal but
// frame-too-large. Other members are ignored. The response does not refer
// to data; Value is a copy of the value's bytes as sent, and the response
// is zero with a refusal. It never panics, is safe for concurrent use, and
// its work is linear in len(data).
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
		p, found, err := strictjson.FoldCollision(resp.Value, nil, maxKeptDepth)
		if err != nil {
			return resp, refuseWrap(refusal.CodeInvalidCard, "/value", "not one strict JSON value", err)
		}
		if found {
			return resp, refusef(refusal.CodeInvalidCard, "/value"+p, "member name differs from another name of the object only by case")
		}
	}
	return resp, nil
}
