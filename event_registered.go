package chatprotocol

import (
	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The registered event types (docs/contract.md section 6.5): events of the
// contract that a host opts into through its [Registry] ([WithReasoning],
// [WithSources]) and that are read as [*AppEvent]s, their shape checked.
const (
	// EventTypeReasoning is the type of a reasoning event: a piece of the
	// model's reasoning or thinking, {"type":"reasoning","text"}.
	EventTypeReasoning = "reasoning"
	// EventTypeSource is the type of a source event: a web page the
	// model's answer cites or consulted, {"type":"source","url","title"?}.
	EventTypeSource = "source"
)

// RegistryOption adds one of the registered events of docs/contract.md
// section 6.5 to a [Registry] that [NewRegistry] builds.
type RegistryOption func(*Registry)

// WithReasoning registers the reasoning event (channel EVENT,
// docs/contract.md section 6.5): the parser checks its shape, the reducer
// leaves it no trace, and the bridges map it to their reasoning parts.
func WithReasoning() RegistryOption {
	return func(r *Registry) { r.shapes[EventTypeReasoning] = reasoningShape }
}

// WithSources registers the source event (channel EVENT, docs/contract.md
// section 6.5): the parser checks its shape, the reducer leaves it no
// trace, and the bridges map it to their source parts.
func WithSources() RegistryOption {
	return func(r *Registry) { r.shapes[EventTypeSource] = sourceShape }
}

// Reasoning is the content of a reasoning event (docs/contract.md section
// 6.5): Text is a piece of the model's reasoning, in stream order; the
// pieces of one reasoning part follow one another. It never is the turn's
// text.
type Reasoning struct {
	Text string
}

// WebSource is the content of a source event (docs/contract.md section 6.5):
// URL is the page (non-empty; a client checks it before following it, as
// for navigate), Title its title, "" for none.
type WebSource struct {
	URL   string
	Title string
}

// Event returns the reasoning event of r, an [*AppEvent] of type
// "reasoning" whose Raw is its canonical JSON. It refuses text that is not
// UTF-8 with invalid-event (/event/text).
func (r Reasoning) Event() (*AppEvent, error) {
	raw, err := strictjson.AppendString([]byte(`{"type":"reasoning","text":`), r.Text)
	if err != nil {
		return nil, refuseWrap(refusal.CodeInvalidEvent, "/event/text", "not valid UTF-8", err)
	}
	return &AppEvent{Type: EventTypeReasoning, Raw: append(raw, '}')}, nil
}

// Event returns the source event of s, an [*AppEvent] of type "source"
// whose Raw is its canonical JSON (no title when Title is ""). It refuses,
// with invalid-event, an empty URL (/event/url) and a URL or title that is
// not UTF-8.
func (s WebSource) Event() (*AppEvent, error) {
	if s.URL == "" {
		return nil, missing(refusal.CodeInvalidEvent, "/event", "url")
	}
	raw, err := strictjson.AppendString([]byte(`{"type":"source","url":`), s.URL)
	if err != nil {
		return nil, refuseWrap(refusal.CodeInvalidEvent, "/event/url", "not valid UTF-8", err)
	}
	if s.Title != "" {
		if raw, err = strictjson.AppendString(append(raw, `,"title":`...), s.Title); err != nil {
			return nil, refuseWrap(refusal.CodeInvalidEvent, "/event/title", "not valid UTF-8", err)
		}
	}
	return &AppEvent{Type: EventTypeSource, Raw: append(raw, '}')}, nil
}

// ReasoningOf returns the content of ev when it is a reasoning event of
// the shape of docs/contract.md section 6.5; ok is false otherwise.
func ReasoningOf(ev Event) (r Reasoning, ok bool) {
	v, ok := shapedValues(ev, EventTypeReasoning, reasoningShape)
	if !ok {
		return Reasoning{}, false
	}
	return Reasoning{Text: v[0]}, true
}

// WebSourceOf returns the content of ev when it is a source event of the
// shape of docs/contract.md section 6.5; ok is false otherwise.
func WebSourceOf(ev Event) (s WebSource, ok bool) {
	v, ok := shapedValues(ev, EventTypeSource, sourceShape)
	if !ok {
		return WebSource{}, false
	}
	return WebSource{URL: v[0], Title: v[1]}, true
}

// shape describes a registered event: its string members, in order, and
// which of them are required and must not be empty.
type shape struct {
	names    []string // "type", then the members
	required []bool   // by member (names[1:])
	nonEmpty []bool
}

var (
	reasoningShape = &shape{names: []string{"type", "text"}, required: []bool{true}, nonEmpty: []bool{false}}
	sourceShape    = &shape{names: []string{"type", "url", "title"}, required: []bool{true, false}, nonEmpty: []bool{true, false}}
)

// member returns the index of name among s's members, -1 for another.
func (s *shape) member(name []byte) int {
	for i, n := range s.names[1:] {
		if n == string(name) {
			return i
		}
	}
	return -1
}

// read reads the members of a registered event object whose '{' d just
// read, up to its '}': each member of s a string, a case variant of one
// refused with invalid-envelope, the others passed over (kept in the
// raw object). path is the event's pointer.
func (s *shape) read(r *reader, path string) ([]string, error) {
	vals := make([]string, len(s.names)-1)
	seen := make([]bool, len(vals))
	for r.d.More() {
		name, err := r.d.Name()
		if err != nil {
			return nil, r.fail(err, refusal.CodeInvalidEvent, path, "")
		}
		if isCaseVariant(name, s.names) {
			return nil, refusef(refusal.CodeInvalidEnvelope, path+"/"+strictjson.EscapePointer(string(name)), "member name differs from a member of the event only by case")
		}
		i := s.member(name)
		if i < 0 {
			if err := r.d.Skip(); err != nil {
				return nil, r.fail(err, refusal.CodeInvalidEvent, path, "")
			}
			continue
		}
		if err := r.str(&vals[i], refusal.CodeInvalidEvent, path, s.names[i+1]); err != nil {
			return nil, err
		}
		seen[i] = true
	}
	if err := r.d.End(); err != nil {
		return nil, r.fail(err, refusal.CodeInvalidEvent, path, "")
	}
	for i := range vals {
		switch {
		case s.required[i] && !seen[i]:
			return nil, missing(refusal.CodeInvalidEvent, path, s.names[i+1])
		case s.nonEmpty[i] && seen[i] && vals[i] == "":
			return nil, refusef(refusal.CodeInvalidEvent, path+"/"+s.names[i+1], "must be a non-empty string")
		}
	}
	return vals, nil
}

// shapedValues reads the members of ev, an *AppEvent of type typ, by s.
func shapedValues(ev Event, typ string, s *shape) ([]string, bool) {
	app, ok := ev.(*AppEvent)
	if !ok || app == nil || app.Type != typ {
		return nil, false
	}
	d := strictjson.Get(app.Raw, string(app.Raw), 0, 0, DefaultMaxDepth)
	defer strictjson.Put(d)
	r := reader{d: d, maxDepth: DefaultMaxDepth}
	if r.d.Begin('{') != nil {
		return nil, false
	}
	vals, err := s.read(&r, "")
	if err != nil || d.Finish() != nil {
		return nil, false
	}
	return vals, true
}
