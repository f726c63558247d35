package wire

import (
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The card and answer rules of docs/contract.md section 3 that both the root
// package's validators and interactions/ apply. Each is written here once;
// a caller chooses the code (the root refuses with invalid-card,
// interactions with invalid-answer or invalid-card) and keeps the path and
// message given here.

// CheckCorrelation refuses a response's correlation id got when it is
// non-empty and not want, the correlation id of the card it answers, at
// /correlationId. An empty one is [ResponseViolations]' to refuse.
func CheckCorrelation(code refusal.Code, want, got string) *refusal.Error {
	if got != "" && got != want {
		return refusal.New(code, "/correlationId", "answers another card")
	}
	return nil
}

// CheckDecline refuses a decline of a card whose spec does not allow one,
// at /action.
func CheckDecline(code refusal.Code, spec cards.CardSpec, action cards.CardAction) *refusal.Error {
	if action == cards.CardActionDecline && !spec.AllowDecline {
		return refusal.New(code, "/action", "the card does not allow a decline")
	}
	return nil
}

// ResponseViolations returns every shape rule of a [cards.CardResponse] that r
// breaks, in the order /correlationId, /action, /value:
//
//   - /correlationId is required (non-empty);
//   - /action is submit, decline or cancel;
//   - a submit carries a /value whose first byte after JSON whitespace
//     opens an object;
//   - a decline or cancel carries no /value (nil or empty; null is a
//     value).
//
// Whether a submit's value is valid JSON is its parser's to judge: the
// root reads it as a browser does, interactions strictly (RFC 7493).
func ResponseViolations(code refusal.Code, r cards.CardResponse) []*refusal.Error {
	var vs []*refusal.Error
	if r.CorrelationID == "" {
		vs = append(vs, refusal.New(code, "/correlationId", "is required"))
	}
	switch r.Action {
	case cards.CardActionSubmit:
		if len(r.Value) == 0 {
			vs = append(vs, refusal.New(code, "/value", "a submit carries a value"))
		} else if firstByte(r.Value) != '{' {
			vs = append(vs, refusal.New(code, "/value", "a submit's value is a JSON object"))
		}
	case cards.CardActionDecline, cards.CardActionCancel:
		if len(r.Value) != 0 {
			vs = append(vs, refusal.New(code, "/value", "a "+string(r.Action)+" carries no value"))
		}
	default:
		vs = append(vs, refusal.New(code, "/action", "is not one of submit, decline, cancel"))
	}
	return vs
}

// firstByte returns the first byte of data after JSON whitespace, or 0.
func firstByte(data []byte) byte {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}
