// Package elicit maps MCP elicitation to cards and back (docs/contract.md
// section 18.4): an elicitation/create request's params in form mode become
// a card with the JSON Schema of its answer, and a card response becomes the
// elicitation's result, {action: accept|decline|cancel, content?}.
//
// A requestedSchema of one property becomes the card of its kind: a
// single-select enum (enum, oneOf of titled consts, legacy enumNames) and a
// boolean a radio card, a multi-select enum a checkbox card, a string a text
// card (a date card for format date), a number or integer with both bounds a
// slider. Any other flat schema (several properties, a number without both
// bounds) becomes a confirm card whose answer is the content itself. The
// answer's schema carries what the presentation cannot (lengths, pattern,
// formats, item counts), so the Resolver's validator still enforces it.
// What no card keeps (defaults, a single property's title) is listed in
// section 18.4; what no card can express (URL mode, nested objects, arrays of
// objects, references) is refused with invalid-card and the JSON pointer of
// the offending member.
//
// The functions are pure and deterministic: a host that keeps the request
// maps it again when the answer comes.
package elicit

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Result is an elicitation's result: Action accept, decline or cancel, and
// for accept the Content, an object matching the requested schema.
type Result struct {
	Action  string          `json:"action"`
	Content json.RawMessage `json:"content,omitempty"`
}

// Card is the card of an elicitation: Spec the card a person answers,
// Schema the JSON Schema of its answer's value (an OpenCardSnapshot's
// dataSchemaJson, and the server-owned schema of section 13.2).
type Card struct {
	Spec   cards.CardSpec
	Schema json.RawMessage

	field string // the single property answered, "" for a confirm card
	typ   string // its type: string, number, integer, boolean, array
}

// property is the part of a requestedSchema property the mapping reads.
type property struct {
	Type        string            `json:"type"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Format      string            `json:"format"`
	Enum        []json.RawMessage `json:"enum"`
	EnumNames   []string          `json:"enumNames"`
	OneOf       []titled          `json:"oneOf"`
	Minimum     *float64          `json:"minimum"`
	Maximum     *float64          `json:"maximum"`
	Items       *struct {
		Type  string            `json:"type"`
		Enum  []json.RawMessage `json:"enum"`
		AnyOf []titled          `json:"anyOf"`
	} `json:"items"`
	raw map[string]json.RawMessage
}

type titled struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// annotations are the members of a property that say nothing of the value.
var annotations = []string{"title", "description", "default", "enumNames"}

// CardOf maps the params of an elicitation/create request (mode form or
// absent, message, requestedSchema) to a card. It refuses, with
// invalid-card and the JSON pointer of the member ([refusal.CodeOf]): URL
// mode, a schema that is not a flat object of string, number, integer,
// boolean and enum-array properties, a property holding $ref, an object or
// an array of anything but enum strings, and an enum of non-strings.
func CardOf(params []byte) (*Card, error) {
	var req struct {
		Mode            string          `json:"mode"`
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &req); err != nil {
		return nil, refusal.Wrap(refusal.CodeInvalidCard, "", "the params are not an elicitation/create request's", err)
	}
	if req.Mode != "" && req.Mode != "form" {
		return nil, refusal.New(refusal.CodeInvalidCard, "/mode", "only form mode maps to a card")
	}
	if req.Message == "" {
		return nil, refusal.New(refusal.CodeInvalidCard, "/message", "a card's prompt is the message, which is empty")
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(req.RequestedSchema, &schema) != nil || schema.Type != "object" {
		return nil, refusal.New(refusal.CodeInvalidCard, "/requestedSchema/type", "the requested schema is not an object schema")
	}
	names := make([]string, 0, len(schema.Properties))
	props := make(map[string]*property, len(schema.Properties))
	for name, raw := range schema.Properties {
		p, err := readProperty(raw, "/requestedSchema/properties/"+pointerToken(name))
		if err != nil {
			return nil, err
		}
		names, props[name] = append(names, name), p
	}
	slices.Sort(names)
	card := &Card{Spec: cards.CardSpec{Prompt: req.Message, AllowDecline: true}}
	if len(names) == 1 {
		if pres, member, ok := presentation(props[names[0]]); ok {
			card.Spec.Presentation, card.field, card.typ = pres, names[0], props[names[0]].Type
			card.Schema = answerSchema(member, props[names[0]])
			return card, nil
		}
	}
	card.Schema = compact(req.RequestedSchema) // a confirm card: the value is the content
	return card, nil
}

// readProperty reads one property, refusing what no card expresses.
func readProperty(raw json.RawMessage, path string) (*property, error) {
	p := &property{}
	if json.Unmarshal(raw, p) != nil || json.Unmarshal(raw, &p.raw) != nil {
		return nil, refusal.New(refusal.CodeInvalidCard, path, "a property is not a JSON Schema object")
	}
	if _, ok := p.raw["$ref"]; ok {
		return nil, refusal.New(refusal.CodeInvalidCard, path+"/$ref", "references are not part of the elicitation schema")
	}
	switch p.Type {
	case "string", "number", "integer", "boolean":
		for i, v := range p.Enum {
			if len(v) == 0 || v[0] != '"' {
				return nil, refusal.New(refusal.CodeInvalidCard, path+"/enum/"+strconv.Itoa(i), "an enum's values are strings")
			}
		}
		return p, nil
	case "array":
		if p.Items != nil && p.Items.Type == "string" && len(p.Items.Enum) > 0 || p.Items != nil && len(p.Items.AnyOf) > 0 {
			return p, nil
		}
		return nil, refusal.New(refusal.CodeInvalidCard, path+"/items", "an array property is a multi-select enum of strings")
	}
	return nil, refusal.New(refusal.CodeInvalidCard, path+"/type", "a property is a string, number, integer, boolean or enum array")
}

// presentation returns the card presentation of a single property and the
// member of the card's answer that holds its value.
func presentation(p *property) (*cards.CardPresentation, string, bool) {
	switch {
	case p.Type == "boolean":
		return &cards.CardPresentation{Kind: cards.CardKindRadio, Options: []cards.CardOption{{ID: "true", Label: "Yes"}, {ID: "false", Label: "No"}}}, "optionId", true
	case p.Type == "string" && (len(p.Enum) > 0 || len(p.OneOf) > 0):
		return &cards.CardPresentation{Kind: cards.CardKindRadio, Options: options(p.Enum, p.EnumNames, p.OneOf)}, "optionId", true
	case p.Type == "array":
		return &cards.CardPresentation{Kind: cards.CardKindCheckbox, Options: options(p.Items.Enum, nil, p.Items.AnyOf)}, "optionIds", true
	case p.Type == "string" && p.Format == "date":
		return &cards.CardPresentation{Kind: cards.CardKindDate}, "date", true
	case p.Type == "string":
		return &cards.CardPresentation{Kind: cards.CardKindText, Placeholder: p.Description}, "text", true
	case p.Minimum != nil && p.Maximum != nil: // number, integer
		pres := &cards.CardPresentation{Kind: cards.CardKindSlider, Min: &cards.CardBound{Number: *p.Minimum}, Max: &cards.CardBound{Number: *p.Maximum}}
		if p.Type == "integer" {
			pres.Step = 1
		}
		return pres, "value", true
	}
	return nil, "", false
}

// options returns the options of an enum: the values as ids, labelled by
// the titles of oneOf or anyOf, by enumNames, or by the values themselves.
func options(enum []json.RawMessage, names []string, consts []titled) []cards.CardOption {
	var out []cards.CardOption
	for _, c := range consts {
		out = append(out, cards.CardOption{ID: c.Const, Label: cmp(c.Title, c.Const)})
	}
	for i, raw := range enum {
		var v string
		json.Unmarshal(raw, &v) // a string: readProperty checked
		label := v
		if i < len(names) {
			label = cmp(names[i], v)
		}
		out = append(out, cards.CardOption{ID: v, Label: label})
	}
	return out
}

func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// answerSchema is the schema of a single-property card's answer: an object
// whose member holds the value, checked by the property's own schema less
// its annotations (a boolean's value is the option id "true" or "false").
func answerSchema(member string, p *property) json.RawMessage {
	value := json.RawMessage(`{"enum":["true","false"]}`)
	if p.Type != "boolean" {
		rest := make(map[string]json.RawMessage, len(p.raw))
		for k, v := range p.raw {
			if !slices.Contains(annotations, k) {
				rest[k] = v
			}
		}
		value, _ = json.Marshal(rest) // raw values of a parsed object: cannot fail
	}
	out, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]json.RawMessage{member: compact(value)}, "required": []string{member}})
	return out
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}

// pointerToken escapes a JSON pointer token (RFC 6901).
func pointerToken(s string) string {
	var b []byte
	for i := range len(s) {
		switch s[i] {
		case '~':
			b = append(b, "~0"...)
		case '/':
			b = append(b, "~1"...)
		default:
			b = append(b, s[i])
		}
	}
	return string(b)
}

// Result maps a card response to the elicitation's result: submit to
// accept with the content, decline to decline, cancel to cancel. The
// response is one the Resolver accepted for this card (the value of the
// card's kind, checked against Schema); a value without the card's member
// is refused with invalid-card at /value.
func (c *Card) Result(r cards.CardResponse) (Result, error) {
	switch r.Action {
	case cards.CardActionDecline:
		return Result{Action: "decline"}, nil
	case cards.CardActionCancel:
		return Result{Action: "cancel"}, nil
	}
	if c.field == "" {
		return Result{Action: "accept", Content: compact(r.Value)}, nil
	}
	var value map[string]json.RawMessage
	if json.Unmarshal(r.Value, &value) != nil {
		return Result{}, refusal.New(refusal.CodeInvalidCard, "/value", "the answer's value is not an object")
	}
	member := map[cards.CardKind]string{cards.CardKindRadio: "optionId", cards.CardKindCheckbox: "optionIds",
		cards.CardKindText: "text", cards.CardKindDate: "date", cards.CardKindSlider: "value"}[c.Spec.Presentation.Kind]
	v, ok := value[member]
	if !ok {
		return Result{}, refusal.New(refusal.CodeInvalidCard, "/value/"+member, "the answer lacks its kind's member")
	}
	if c.typ == "boolean" {
		v = json.RawMessage(`false`)
		if string(value[member]) == `"true"` {
			v = json.RawMessage(`true`)
		}
	}
	content, _ := json.Marshal(map[string]json.RawMessage{c.field: compact(v)})
	return Result{Action: "accept", Content: content}, nil
}
