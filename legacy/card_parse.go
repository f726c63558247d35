package legacy

import (
	"bytes"
)

// readCard reads a card frame's card, the object of s, by the reference's
// OpenCardSnapshot (docs/contract.md section 3.1). The card's text is
// parsed again only for a dataSchemaJson, kept as its text, and for
// members the types do not name, kept in Unknown at their level.
func readCard(s *shape) Card {
	c := Card{
		CorrelationID: s.str("correlationId"),
		CreatedAt:     s.num("createdAt"),
		Prompt:        s.str("prompt"),
		FallbackText:  s.optStr("fallbackText"),
		AllowDecline:  s.optBool("allowDecline"),
		TimeoutMs:     s.optNum("timeoutMs"),
	}
	if m, ok := s.optObject("presentation"); ok {
		p := s.child("presentation", m)
		c.Presentation = readPresentation(&p)
		s.adopt(&p)
	}
	if m, ok := s.optObject("report"); ok {
		r := s.child("report", m)
		c.Report = readReport(&r)
		s.adopt(&r)
	}
	if _, ok := s.optObject("dataSchemaJson"); ok {
		c.DataSchemaJSON = bytes.Clone(s.memberSpans().Get("dataSchemaJson"))
	}
	c.Unknown = s.unknown(cardNames)
	return c
}

func readPresentation(s *shape) *CardPresentation {
	p := &CardPresentation{
		Kind:            s.enum("kind", cardKinds),
		Placeholder:     s.optStr("placeholder"),
		Multiline:       s.optBool("multiline"),
		Min:             readBound(s, "min"),
		Max:             readBound(s, "max"),
		Step:            s.optNum("step"),
		VoiceAnswerable: s.optBool("voiceAnswerable"),
		Unknown:         s.unknown(presentationNames),
	}
	if opts, ok := s.optArray("options"); ok {
		p.Options = readObjects(s, "options", opts, readOption)
	}
	return p
}

func readOption(o shape) (CardOption, shape) {
	opt := CardOption{
		ID:          o.str("id"),
		Label:       o.str("label"),
		Description: o.optStr("description"),
		Hint:        o.optStr("hint"),
		Style:       o.optEnum("style", optionStyles),
		Unknown:     o.unknown(optionNames),
	}
	return opt, o
}

// readBound reads min or max: the reference's number | string.
func readBound(s *shape, name string) *CardBound {
	v, ok := s.member(name, false)
	if !ok {
		return nil
	}
	if str, isString := v.(string); isString {
		return &CardBound{String: str, IsString: true}
	}
	return &CardBound{Number: s.asNumber(name, v)}
}

func readReport(s *shape) *Report {
	r := &Report{Title: s.optStr("title"), Unknown: s.unknown(reportNames)}
	if plans, ok := s.array("plans"); ok {
		r.Plans = readObjects(s, "plans", plans, readPlan)
	}
	return r
}

func readPlan(p shape) (ReportPlan, shape) {
	plan := ReportPlan{Slug: p.optStr("slug"), Title: p.str("title"), Status: p.optStr("status"), Summary: p.optStr("summary"), Unknown: p.unknown(planNames)}
	if items, ok := p.optArray("items"); ok {
		plan.Items = readObjects(&p, "items", items, readItem)
	}
	return plan, p
}

func readItem(it shape) (ReportItem, shape) {
	item := ReportItem{ID: it.optStr("id"), Text: it.str("text"), Status: it.optStr("status"), Ref: it.optStr("ref"), Unknown: it.unknown(itemNames)}
	return item, it
}

// readObjects reads arr, the array member name of s, whose elements must be
// objects, each by read, up to the first that is not one (nextObject). read
// is given the element's shape and returns it with what reading it noted
// (misfit, unknown members): shapes pass by value, for a shape whose
// address a func value gets is moved to the heap.
func readObjects[T any](s *shape, name string, arr []any, read func(shape) (T, shape)) []T {
	out := make([]T, 0, len(arr))
	var e shape
	for i := 0; s.nextObject(name, arr, i, &e); i++ {
		var t T
		t, e = read(e)
		out = append(out, t)
	}
	return out
}
