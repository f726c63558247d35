package legacy

import (
	"math"

	"github.com/Papercusp/chat-protocol-go/blocks"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// ToOpenCardSnapshot gives the version-1 card of c, the one the upgrade
// puts in a card event and [chatprotocol.ValidateOpenCardSnapshot] checks
// (docs/contract.md sections 3 and 9.3). Absent members become the zero
// values version 1 omits. Version 1 needs integers and a bound of a type it
// can tell: a createdAt or timeoutMs that is not a whole number of
// magnitude at most 2^53-1 is refused with invalid-event, an empty string
// bound (no ISO date, no number) with invalid-card, each at its path under
// /card. The card rules themselves are left to the validator.
func (c *Card) ToOpenCardSnapshot() (cards.OpenCardSnapshot, error) {
	out := cards.OpenCardSnapshot{CorrelationID: c.CorrelationID}
	var err error
	if out.CreatedAt, err = wholeNumber("/card/createdAt", c.CreatedAt); err != nil {
		return out, err
	}
	out.Prompt = c.Prompt
	out.FallbackText = deref(c.FallbackText)
	out.AllowDecline = deref(c.AllowDecline)
	if c.TimeoutMs != nil {
		if out.TimeoutMs, err = wholeNumber("/card/timeoutMs", *c.TimeoutMs); err != nil {
			return out, err
		}
	}
	if c.Presentation != nil {
		if out.Presentation, err = c.Presentation.toV1(); err != nil {
			return out, err
		}
	}
	if c.Report != nil {
		out.Report = c.Report.toV1()
	}
	if c.DataSchemaJSON != nil {
		out.DataSchemaJSON = string(c.DataSchemaJSON)
	}
	return out, nil
}

func (p *CardPresentation) toV1() (*cards.CardPresentation, error) {
	out := &cards.CardPresentation{
		Kind:            cards.CardKind(p.Kind),
		Placeholder:     deref(p.Placeholder),
		Multiline:       deref(p.Multiline),
		Step:            deref(p.Step),
		VoiceAnswerable: deref(p.VoiceAnswerable),
	}
	for _, o := range p.Options {
		out.Options = append(out.Options, cards.CardOption{
			ID: o.ID, Label: o.Label, Description: deref(o.Description), Hint: deref(o.Hint),
			Style: cards.CardOptionStyle(deref(o.Style)),
		})
	}
	var err error
	if out.Min, err = p.Min.toV1("/card/presentation/min"); err != nil {
		return nil, err
	}
	if out.Max, err = p.Max.toV1("/card/presentation/max"); err != nil {
		return nil, err
	}
	return out, nil
}

func (b *CardBound) toV1(path string) (*cards.CardBound, error) {
	switch {
	case b == nil:
		return nil, nil
	case !b.IsString:
		return &cards.CardBound{Number: b.Number}, nil
	case b.String == "":
		return nil, refusal.New(refusal.CodeInvalidCard, path, "an empty string is neither a number nor an ISO date")
	}
	return &cards.CardBound{Date: b.String}, nil
}

func (r *Report) toV1() *blocks.ReportBlock {
	out := &blocks.ReportBlock{Title: deref(r.Title), Plans: make([]blocks.ReportPlan, 0, len(r.Plans))}
	for _, p := range r.Plans {
		plan := blocks.ReportPlan{Slug: deref(p.Slug), Title: p.Title, Status: deref(p.Status), Summary: deref(p.Summary)}
		for _, it := range p.Items {
			plan.Items = append(plan.Items, blocks.ReportItem{ID: deref(it.ID), Text: it.Text, Status: deref(it.Status), Ref: deref(it.Ref)})
		}
		out.Plans = append(out.Plans, plan)
	}
	return out
}

// cardV0 gives the version-0 card of a version-1 card: the members version
// 1 omits as zero values are absent. An integer beyond 2^53-1, which a
// JavaScript reader would round, is refused with unsupported-event at its
// path under /event/card.
func cardV0(c *cards.OpenCardSnapshot) (*Card, error) {
	out := &Card{CorrelationID: c.CorrelationID, Prompt: c.Prompt}
	var err error
	if out.CreatedAt, err = exactNumber("/event/card/createdAt", c.CreatedAt); err != nil {
		return nil, err
	}
	out.FallbackText = present(c.FallbackText)
	out.AllowDecline = present(c.AllowDecline)
	if c.TimeoutMs != 0 {
		ms, err := exactNumber("/event/card/timeoutMs", c.TimeoutMs)
		if err != nil {
			return nil, err
		}
		out.TimeoutMs = &ms
	}
	if p := c.Presentation; p != nil {
		out.Presentation = &CardPresentation{
			Kind: string(p.Kind), Placeholder: present(p.Placeholder), Multiline: present(p.Multiline),
			Min: boundV0(p.Min), Max: boundV0(p.Max), Step: present(p.Step), VoiceAnswerable: present(p.VoiceAnswerable),
		}
		for _, o := range p.Options {
			out.Presentation.Options = append(out.Presentation.Options, CardOption{
				ID: o.ID, Label: o.Label, Description: present(o.Description), Hint: present(o.Hint), Style: present(string(o.Style)),
			})
		}
	}
	if r := c.Report; r != nil {
		out.Report = &Report{Title: present(r.Title), Plans: make([]ReportPlan, 0, len(r.Plans))}
		for _, p := range r.Plans {
			plan := ReportPlan{Slug: present(p.Slug), Title: p.Title, Status: present(p.Status), Summary: present(p.Summary)}
			for _, it := range p.Items {
				plan.Items = append(plan.Items, ReportItem{ID: present(it.ID), Text: it.Text, Status: present(it.Status), Ref: present(it.Ref)})
			}
			out.Report.Plans = append(out.Report.Plans, plan)
		}
	}
	if c.DataSchemaJSON != "" {
		out.DataSchemaJSON = []byte(c.DataSchemaJSON)
	}
	return out, nil
}

func boundV0(b *cards.CardBound) *CardBound {
	switch {
	case b == nil:
		return nil
	case b.IsDate():
		return &CardBound{String: b.Date, IsString: true}
	}
	return &CardBound{Number: b.Number}
}

// wholeNumber gives f as the integer version 1 needs, or refuses it with
// invalid-event at path.
func wholeNumber(path string, f float64) (int64, error) {
	if f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
		return 0, refusal.New(refusal.CodeInvalidEvent, path, "version 1 needs a whole number of magnitude at most 2^53-1")
	}
	return int64(f), nil
}

// exactNumber gives n as a version-0 number, or refuses it with
// unsupported-event at path when a JavaScript number would round it.
func exactNumber(path string, n int64) (float64, error) {
	if n > maxSafeInteger || n < -maxSafeInteger {
		return 0, noLegacyForm(path, "an integer beyond 2^53-1 has no exact legacy form")
	}
	return float64(n), nil
}

// convertNumber gives *n as converted by conv (wholeNumber, exactNumber),
// or nil when n is nil; conv's refusal, at path, is returned as it is.
func convertNumber[From, To any](path string, n *From, conv func(string, From) (To, error)) (*To, error) {
	if n == nil {
		return nil, nil
	}
	out, err := conv(path, *n)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// deref gives *p, or the zero value when p is nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// present gives a pointer to v, or nil when v is the zero value (which
// version 1 omits).
func present[T comparable](v T) *T {
	var zero T
	if v == zero {
		return nil
	}
	return &v
}
