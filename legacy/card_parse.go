package legacy

import (
	"bytes"

	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
)

// readCard reads a card frame's card, the object of s whose JSON text is
// span, by the reference's OpenCardSnapshot (docs/contract.md section 3.1).
// The text is parsed again only for a dataSchemaJson, kept as its text.
func readCard(s *shape, span []byte) Card {
	c := Card{
		CorrelationID: s.str("correlationId"),
		CreatedAt:     s.num("createdAt"),
		Prompt:        s.str("prompt"),
		FallbackText:  s.optStr("fallbackText"),
		AllowDecline:  s.optBool("allowDecline"),
		TimeoutMs:     s.optNum("timeoutMs"),
	}
	if m, ok := s.optObject("presentation"); ok {
		p := shape{m: m, at: s.at + "/presentation"}
		c.Presentation = readPresentation(&p)
		s.adopt(&p)
	}
	if m, ok := s.optObject("report"); ok {
		r := shape{m: m, at: s.at + "/report"}
		c.Report = readReport(&r)
		s.adopt(&r)
	}
	if _, ok := s.optObject("dataSchemaJson"); ok {
		_, spans, _ := jsjson.ParseObject(span)
		c.DataSchemaJSON = bytes.Clone(spans.Get("dataSchemaJson"))
	}
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
	}
	if opts, ok := s.optArray("options"); ok {
		p.Options = make([]CardOption, 0, len(opts))
		for i, v := range opts {
			o, ok := s.elem("options", i, v)
			if !ok {
				break
			}
			p.Options = append(p.Options, CardOption{
				ID:          o.str("id"),
				Label:       o.str("label"),
				Description: o.optStr("description"),
				Hint:        o.optStr("hint"),
				Style:       o.optEnum("style", optionStyles),
			})
			s.adopt(&o)
		}
	}
	return p
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
	r := &Report{Title: s.optStr("title")}
	plans, ok := s.array("plans")
	if !ok {
		return r
	}
	r.Plans = make([]ReportPlan, 0, len(plans))
	for i, v := range plans {
		p, ok := s.elem("plans", i, v)
		if !ok {
			break
		}
		plan := ReportPlan{Slug: p.optStr("slug"), Title: p.str("title"), Status: p.optStr("status"), Summary: p.optStr("summary")}
		if items, ok := p.optArray("items"); ok {
			plan.Items = make([]ReportItem, 0, len(items))
			for j, v := range items {
				it, ok := p.elem("items", j, v)
				if !ok {
					break
				}
				plan.Items = append(plan.Items, ReportItem{ID: it.optStr("id"), Text: it.str("text"), Status: it.optStr("status"), Ref: it.optStr("ref")})
				p.adopt(&it)
			}
		}
		r.Plans = append(r.Plans, plan)
		s.adopt(&p)
	}
	return r
}
