package chatprotocol

import (
	"math"
	"strconv"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
	"github.com/Papercusp/chat-protocol-go/internal/wire"
)

// ValidateCardAnswer checks a person's response against the open card it
// answers (docs/contract.md section 3) and returns nil or a [CardViolations]
// listing every violation. Beyond [ValidateCardResponse]'s shape rules:
//
//   - /correlationId equals the card's.
//   - A decline needs a card with allowDecline (/action).
//   - A submit's value has the shape of the card's kind: radio and select
//     {"optionId": id} naming one of the card's options (/value/optionId);
//     checkbox {"optionIds": [id …]} each naming an option, none twice
//     (/value/optionIds/N); text {"text": string} (/value/text); slider
//     {"value": number} within min and max (/value/value); date
//     {"date": ISO date} within min and max (/value/date). Other members of
//     the value are allowed. A confirm card (no presentation) takes any
//     object.
//
// The card itself is not checked; use [ValidateOpenCardSnapshot] for that.
// The value is read as a browser reads JSON (duplicate names last-one-wins).
// Hosts that validate against a server-owned JSON Schema do that as well,
// not instead (docs/contract.md section 13.2). Safe for concurrent use.
func ValidateCardAnswer(card cards.OpenCardSnapshot, r cards.CardResponse) error {
	vs := responseViolations(r)
	for _, v := range []*refusal.Error{
		wire.CheckCorrelation(refusal.CodeInvalidCard, card.CorrelationID, r.CorrelationID),
		wire.CheckDecline(refusal.CodeInvalidCard, card.CardSpec, r.Action),
	} {
		if v != nil {
			vs = append(vs, v)
		}
	}
	if r.Action == cards.CardActionSubmit && card.Presentation != nil {
		if v, ok := jsjson.Parse(r.Value); ok {
			if obj, ok := v.(map[string]any); ok {
				vs = append(vs, answerViolations(card.Presentation, obj)...)
			}
		}
	}
	return violations(vs)
}

// answerViolations checks a submitted value object against a presentation.
func answerViolations(p *cards.CardPresentation, value map[string]any) []*refusal.Error {
	ids := make(map[string]bool, len(p.Options))
	for _, o := range p.Options {
		ids[o.ID] = true
	}
	switch p.Kind {
	case cards.CardKindRadio, cards.CardKindSelect:
		id, ok := value["optionId"].(string)
		switch {
		case !ok:
			return []*refusal.Error{violation("/value/optionId", "a "+string(p.Kind)+" answer is {\"optionId\": string}")}
		case !ids[id]:
			return []*refusal.Error{violation("/value/optionId", "names no option of the card")}
		}
	case cards.CardKindCheckbox:
		list, ok := value["optionIds"].([]any)
		if !ok {
			return []*refusal.Error{violation("/value/optionIds", "a checkbox answer is {\"optionIds\": [string]}")}
		}
		var vs []*refusal.Error
		picked := make(map[string]bool, len(list))
		for i, e := range list {
			at := "/value/optionIds/" + strconv.Itoa(i)
			id, ok := e.(string)
			switch {
			case !ok || !ids[id]:
				vs = append(vs, violation(at, "names no option of the card"))
			case picked[id]:
				vs = append(vs, violation(at, "picks an option twice"))
			}
			picked[id] = true
		}
		return vs
	case cards.CardKindText:
		if _, ok := value["text"].(string); !ok {
			return []*refusal.Error{violation("/value/text", "a text answer is {\"text\": string}")}
		}
	case cards.CardKindSlider:
		n, ok := value["value"].(float64)
		if !ok || math.IsInf(n, 0) {
			return []*refusal.Error{violation("/value/value", "a slider answer is {\"value\": number}")}
		}
		if outOfBounds(n, p.Min, p.Max, func(b *cards.CardBound) (float64, bool) { return b.Number, !b.IsDate() }) {
			return []*refusal.Error{violation("/value/value", "is outside the card's min and max")}
		}
	case cards.CardKindDate:
		s, ok := value["date"].(string)
		t, isDate := parseISODate(s)
		if !ok || !isDate {
			return []*refusal.Error{violation("/value/date", "a date answer is {\"date\": ISO 8601 date}")}
		}
		bound := func(b *cards.CardBound) (float64, bool) {
			bt, ok := parseISODate(b.Date)
			return float64(bt.UnixMilli()), ok
		}
		if outOfBounds(float64(t.UnixMilli()), p.Min, p.Max, bound) {
			return []*refusal.Error{violation("/value/date", "is outside the card's min and max")}
		}
	}
	return nil
}

// outOfBounds reports whether x is below a usable min or above a usable max.
func outOfBounds(x float64, lo, hi *cards.CardBound, read func(*cards.CardBound) (float64, bool)) bool {
	if lo != nil {
		if v, ok := read(lo); ok && x < v {
			return true
		}
	}
	if hi != nil {
		if v, ok := read(hi); ok && x > v {
			return true
		}
	}
	return false
}
