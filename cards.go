package chatprotocol

import (
	"cmp"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/go-playground/validator/v10"

	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
	"github.com/Papercusp/chat-protocol-go/internal/wire"
)

// CardViolations is the error returned by the card validators: every rule of
// docs/contract.md section 3 the value breaks, sorted by path. Each element is
// an [*refusal.Error] of code invalid-card whose Path is the JSON pointer of
// the offending member in the value's JSON form ("/presentation/options",
// "/presentation/options/1/id", "/value"); its Message is for people only.
//
// [errors.Is](err, [refusal.ErrInvalidCard]) holds for a CardViolations, and
// errors.AsType[CardViolations](err) gives every violation.
type CardViolations []*refusal.Error

// Error lists the violations, one per line after a count.
func (v CardViolations) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d violation(s)", refusal.CodeInvalidCard, len(v))
	for _, e := range v {
		b.WriteString("\n\t")
		b.WriteString(e.Error())
	}
	return b.String()
}

// Unwrap returns the violations, for [errors.Is] and [errors.As].
func (v CardViolations) Unwrap() []error {
	errs := make([]error, len(v))
	for i, e := range v {
		errs[i] = e
	}
	return errs
}

// ValidateCardSpec checks a card spec against docs/contract.md section 3 and
// returns nil or a [CardViolations] listing every violation:
//
//   - /prompt is required (non-empty); /timeoutMs is not negative.
//   - /presentation/kind is one of radio, checkbox, text, date, slider,
//     select. A radio, checkbox or select card has at least one option
//     (/presentation/options); every option has an id and a label, ids do
//     not repeat (the later one is reported, /presentation/options/1/id),
//     and a style is default, primary or danger.
//   - /presentation/step is not negative. A slider's min and max are
//     numbers; a date card's are ISO 8601 dates (2006-01-02 or RFC 3339);
//     min is not above max (reported at /presentation/max).
//   - A /report has at least one plan, every plan a title and every item a
//     text (what [blocks.ParseReportBlock] guarantees).
//
// A card without presentation is a confirm card and needs none of the
// presentation rules. ValidateCardSpec is safe for concurrent use.
func ValidateCardSpec(spec cards.CardSpec) error {
	return violations(structViolations(spec), specViolations(spec, ""))
}

// ValidateOpenCardSnapshot checks an open card: the rules of
// [ValidateCardSpec], plus a required /correlationId, a positive /createdAt
// (epoch milliseconds) and, when set, a /dataSchemaJson that is the JSON
// text of an object. It returns nil or a [CardViolations].
func ValidateOpenCardSnapshot(card cards.OpenCardSnapshot) error {
	vs := structViolations(card)
	vs = append(vs, specViolations(card.CardSpec, "")...)
	if card.DataSchemaJSON != "" {
		if v, ok := jsjson.ParseString(card.DataSchemaJSON); !ok || !isObject(v) {
			vs = append(vs, violation("/dataSchemaJson", "is not the JSON text of an object"))
		}
	}
	return violations(vs)
}

// ValidateCardResponse checks a person's answer by its shape alone
// (docs/contract.md section 3): /action is submit, decline or cancel;
// /correlationId is required; a submit carries a /value that is a JSON object,
// and a decline or cancel carries none. It returns nil or a [CardViolations].
// [ValidateCardAnswer] also checks the value against the card.
func ValidateCardResponse(r cards.CardResponse) error {
	return violations(responseViolations(r))
}

// responseViolations applies the shape rules of internal/wire, which
// interactions applies too, and reads a submit's value as a browser does.
func responseViolations(r cards.CardResponse) []*refusal.Error {
	vs := wire.ResponseViolations(refusal.CodeInvalidCard, r)
	if len(vs) == 0 && r.Action == cards.CardActionSubmit {
		if _, ok := jsjson.Parse(r.Value); !ok {
			vs = append(vs, violation("/value", "is not a JSON object"))
		}
	}
	return vs
}

// specViolations applies the rules of a cards.CardSpec that depend on the kind.
func specViolations(spec cards.CardSpec, prefix string) []*refusal.Error {
	var vs []*refusal.Error
	if spec.TimeoutMs < 0 {
		vs = append(vs, violation(prefix+"/timeoutMs", "a timeout is not negative"))
	}
	p := spec.Presentation
	if p == nil {
		return vs
	}
	at := prefix + "/presentation"
	switch p.Kind {
	case cards.CardKindRadio, cards.CardKindCheckbox, cards.CardKindSelect:
		if len(p.Options) == 0 {
			vs = append(vs, violation(at+"/options", "a "+string(p.Kind)+" card has at least one option"))
		}
	}
	seen := make(map[string]bool, len(p.Options))
	for i, o := range p.Options {
		if o.ID != "" && seen[o.ID] {
			vs = append(vs, violation(at+"/options/"+strconv.Itoa(i)+"/id", "repeats option id "+strconv.Quote(o.ID)))
		}
		seen[o.ID] = true
	}
	switch p.Kind {
	case cards.CardKindSlider:
		vs = append(vs, boundViolations(p, at, false)...)
	case cards.CardKindDate:
		vs = append(vs, boundViolations(p, at, true)...)
	}
	return vs
}

// boundViolations checks min and max of a slider (numbers) or a date card
// (dates), and that min is not above max.
func boundViolations(p *cards.CardPresentation, at string, dates bool) []*refusal.Error {
	var vs []*refusal.Error
	var lo, hi float64
	var haveLo, haveHi bool
	for _, side := range []struct {
		name string
		b    *cards.CardBound
		v    *float64
		ok   *bool
	}{{"min", p.Min, &lo, &haveLo}, {"max", p.Max, &hi, &haveHi}} {
		if side.b == nil {
			continue
		}
		switch {
		case dates && !side.b.IsDate():
			vs = append(vs, violation(at+"/"+side.name, "a date card's bound is an ISO date string"))
		case dates:
			t, ok := parseISODate(side.b.Date)
			if !ok {
				vs = append(vs, violation(at+"/"+side.name, "is not an ISO 8601 date"))
				continue
			}
			*side.v, *side.ok = float64(t.UnixMilli()), true
		case side.b.IsDate():
			vs = append(vs, violation(at+"/"+side.name, "a slider's bound is a number"))
		default:
			*side.v, *side.ok = side.b.Number, true
		}
	}
	if haveLo && haveHi && lo > hi {
		vs = append(vs, violation(at+"/max", "is below min"))
	}
	return vs
}

// parseISODate reads an ISO 8601 calendar date (2006-01-02) or an RFC 3339
// date-time (see parseRFC3339).
func parseISODate(s string) (time.Time, bool) {
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, true
	}
	return parseRFC3339(s)
}

func isObject(v any) bool {
	_, ok := v.(map[string]any)
	return ok
}

func violation(path, message string) *refusal.Error {
	return refusal.New(refusal.CodeInvalidCard, path, message)
}

// violations joins lists of violations into a sorted CardViolations, or
// nil when there are none.
func violations(lists ...[]*refusal.Error) error {
	var all CardViolations
	for _, l := range lists {
		all = append(all, l...)
	}
	if len(all) == 0 {
		return nil
	}
	slices.SortStableFunc(all, func(a, b *refusal.Error) int { return cmp.Compare(a.Path, b.Path) })
	return all
}

// cardValidator is built once, on first use; a *validator.Validate is safe
// for concurrent use once configured.
var cardValidator = sync.OnceValue(func() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled(), validator.WithTagNameFuncBlankOmit())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		if name == "" && !f.Anonymous {
			return f.Name
		}
		return name // "" for an embedded struct: its members sit at the parent's level
	})
	return v
})

// structViolations runs the validate tags of internal/wire's card types
// (and of blocks' report types) over v and converts each failure into a
// violation at its JSON pointer.
func structViolations(v any) []*refusal.Error {
	err := cardValidator().Struct(v)
	if err == nil {
		return nil
	}
	fes, ok := err.(validator.ValidationErrors)
	if !ok {
		return []*refusal.Error{refusal.Wrap(refusal.CodeInvalidCard, "", "cannot validate", err)}
	}
	vs := make([]*refusal.Error, 0, len(fes))
	for _, fe := range fes {
		vs = append(vs, violation(namespacePointer(fe.Namespace()), ruleMessage(fe)))
	}
	return vs
}

// namespacePointer turns a validator namespace written with JSON names
// ("cards.CardSpec.presentation.options[1].id") into a JSON pointer
// ("/presentation/options/1/id"): the root type's name is dropped and each
// index becomes a segment.
func namespacePointer(ns string) string {
	_, rest, _ := strings.Cut(ns, ".")
	var b strings.Builder
	for seg := range strings.SplitSeq(rest, ".") {
		name, idx, _ := strings.Cut(seg, "[")
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(name))
		for idx != "" {
			var i string
			i, idx, _ = strings.Cut(idx, "]")
			b.WriteByte('/')
			b.WriteString(i)
			idx = strings.TrimPrefix(idx, "[")
		}
	}
	return b.String()
}

func ruleMessage(fe validator.FieldError) string {
	switch fe.Tag() {
	case "required":
		return "is required"
	case "oneof":
		return "is not one of " + strings.Join(strings.Fields(fe.Param()), ", ")
	case "min":
		return "needs at least " + fe.Param()
	case "gt", "gte":
		return "is below its minimum " + fe.Param()
	}
	return "breaks rule " + fe.Tag()
}
