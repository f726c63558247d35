package chatprotocol

import (
	"encoding/json"
	"reflect"
	"unsafe"

	"github.com/Papercusp/chat-protocol-go/blocks"
	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// eventSpec is the descriptor of one event type of docs/contract.md section 6
// (docs/contract.md): its wire name, its channel and its members.
type eventSpec struct {
	typ     string
	channel Channel
	obj     *objectSpec
}

// eventSpecs describes the fourteen event types of version 1, in the order
// of docs/contract.md section 6: for each member its wire name, the Go field
// that holds it, its kind, whether it is required (need), its value rule
// (is, oneOf) and its refusal code when not invalid-event (coded). The
// members are in canonical order, which is the order Marshal writes them
// and the order presence and value rules are checked in.
var eventSpecs = [...]eventSpec{
	{EventTypeSession, ChannelEvent, eventOf[SessionEvent](
		member("sessionId", "SessionID", kindString).need().is(ruleID))},
	{EventTypeLifecycle, ChannelEvent, eventOf[LifecycleEvent](
		member("status", "Status", kindString).need().oneOf(isLifecycleStatus),
		member("reason", "Reason", kindString),
		member("usage", "Usage", kindObject).of(usageSpec))},
	{EventTypeDelta, ChannelEvent, eventOf[DeltaEvent](
		member("text", "Text", kindString).need())},
	{EventTypeToolCall, ChannelEvent, eventOf[ToolCallEvent](
		member("callId", "CallID", kindString).need().is(ruleID).coded(refusal.CodeMissingCallID),
		member("name", "Name", kindString).need().is(ruleNonEmpty),
		member("input", "Input", kindRaw))},
	{EventTypeToolResult, ChannelEvent, eventOf[ToolResultEvent](
		member("callId", "CallID", kindString).need().is(ruleID).coded(refusal.CodeMissingCallID),
		member("status", "Status", kindString).oneOf(isToolResultStatus).coded(refusal.CodeUnknownResultStatus),
		member("output", "Output", kindRaw),
		member("blocks", "Blocks", kindBlocks))},
	{EventTypeResult, ChannelEvent, eventOf[ResultEvent](
		member("blocks", "Blocks", kindBlocks).need())},
	{EventTypeProvenance, ChannelEvent, eventOf[ProvenanceEvent](
		member("provider", "Provider", kindString).is(ruleNonEmpty),
		member("model", "Model", kindString),
		member("requestId", "RequestID", kindString))},
	{EventTypeError, ChannelEvent, eventOf[ErrorEvent](
		member("code", "Code", kindString).is(ruleNonEmpty),
		member("message", "Message", kindString).need(),
		member("retryable", "Retryable", kindBool).need(),
		member("retryAfterMs", "RetryAfterMs", kindInteger).is(ruleNonNegative))},
	{EventTypeStep, ChannelEvent, eventOf[StepEvent](
		member("step", "Step", kindInteger).need().is(ruleOrdinal),
		member("status", "Status", kindString).need().oneOf(isStepStatus),
		member("reason", "Reason", kindString),
		member("usage", "Usage", kindObject).of(usageSpec))},
	{EventTypeCard, ChannelState, eventOf[CardEvent](
		member("card", "Card", kindCard).need())},
	{EventTypeCardClosed, ChannelState, eventOf[CardClosedEvent](
		member("correlationId", "CorrelationID", kindString).is(ruleID),
		member("outcome", "Outcome", kindString))},
	{EventTypeState, ChannelState, eventOf[StateEvent](
		member("version", "Version", kindInteger).need().is(ruleNonNegative),
		member("snapshot", "Snapshot", kindRaw).is(ruleSet))},
	{EventTypeCapabilities, ChannelState, eventOf[CapabilitiesEvent](
		member("capabilities", "Capabilities", kindObject).need().of(capabilitiesSpec))},
	{EventTypeNavigate, ChannelTransient, eventOf[NavigateEvent](
		member("href", "Href", kindString).need().is(ruleNonEmpty))},
}

// The objects nested in events (docs/contract.md sections 6 and 8).
var (
	usageSpec = objectOf[Usage](
		member("totalTokens", "TotalTokens", kindInteger).is(ruleNonNegative),
		member("costUsd", "CostUSD", kindNumber).is(ruleFinite))
	sourceSpec = objectOf[Source](
		member("ref", "Ref", kindString).need(),
		member("label", "Label", kindString))
	blockSpec = objectOf[blockWire](
		member("kind", "Kind", kindString).need(),
		member("text", "Text", kindString),
		member("sources", "Sources", kindList).of(sourceSpec),
		member("report", "Report", kindRaw),
		member("ask", "Ask", kindRaw))
)

// blockWire is a result block as read, before the rules of its kind turn
// it into a ResultBlock.
type blockWire struct {
	Kind    string
	Text    string
	Sources []Source
	Report  []byte
	Ask     []byte
	Unknown []Member
}

func isLifecycleStatus(s string) bool  { return LifecycleStatus(s).Valid() }
func isToolResultStatus(s string) bool { return ToolResultStatus(s).Valid() }

// eventSpecOf returns the descriptor of the event type typ, or nil for a
// type not of docs/contract.md section 6.
func eventSpecOf(typ string) *eventSpec {
	for i := range eventSpecs {
		if eventSpecs[i].typ == typ {
			return &eventSpecs[i]
		}
	}
	return nil
}

// event reads the event object at path (docs/contract.md section 6). Canonical producers
// write "type" first, which lets the reader dispatch without a second pass;
// any other order is read through a view of the whole object.
func (r *reader) event(path string) (Event, error) {
	typ, ok := r.d.PeekFirstMember("type")
	if !ok {
		return r.eventAnyOrder(path)
	}
	if ev, known, err := r.coreEvent(string(typ), path); known {
		return ev, err
	}
	return r.appEvent(typ, path)
}

// eventAnyOrder reads an event object whose first member is not a plain
// "type": it finds the type in a first pass over the object's view and
// reads the members in a second.
func (r *reader) eventAnyOrder(path string) (Event, error) {
	v, start, err := r.d.View()
	if err != nil {
		return nil, r.fail(err, refusal.CodeInvalidEnvelope, path, "")
	}
	if v[0] != '{' {
		return nil, refusef(refusal.CodeInvalidEnvelope, path, "must be an object")
	}
	depth := r.d.Depth()
	find := strictjson.Get(v, r.d.Src(), start, depth, r.maxDepth)
	sub := reader{d: find, prefix: r.prefix + path, maxDepth: r.maxDepth, reg: r.reg}
	typ, found, err := sub.findType(path)
	strictjson.Put(find)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, missing(refusal.CodeInvalidEvent, path, "type")
	}
	second := strictjson.Get(v, r.d.Src(), start, depth, r.maxDepth)
	defer strictjson.Put(second)
	sub.d = second
	if ev, known, err := sub.coreEvent(typ, path); known {
		return ev, err
	}
	return sub.appEvent([]byte(typ), path)
}

// findType reads the top-level members of an object and returns its
// "type" string.
func (r *reader) findType(path string) (typ string, found bool, err error) {
	if err := r.object(refusal.CodeInvalidEnvelope, path, ""); err != nil {
		return "", false, err
	}
	for r.d.More() {
		name, err := r.d.Name()
		if err != nil {
			return "", false, r.fail(err, refusal.CodeInvalidEvent, path, "")
		}
		if string(name) == "type" {
			if err := r.str(&typ, refusal.CodeInvalidEvent, path, "type"); err != nil {
				return "", false, err
			}
			found = true
			continue
		}
		if err := r.d.Skip(); err != nil {
			return "", false, r.fail(err, refusal.CodeInvalidEvent, path, "")
		}
	}
	if err := r.d.End(); err != nil {
		return "", false, r.fail(err, refusal.CodeInvalidEvent, path, "")
	}
	return typ, found, nil
}

// coreEvent reads an event of a type of docs/contract.md section 6 with its descriptor:
// its members (readMembers), then their value rules. known is false, and
// nothing is read, for any other type.
func (r *reader) coreEvent(typ, path string) (ev Event, known bool, err error) {
	s := eventSpecOf(typ)
	if s == nil {
		return nil, false, nil
	}
	if err := r.object(refusal.CodeInvalidEnvelope, path, ""); err != nil {
		return nil, true, err
	}
	ev = s.obj.zero()
	v := reflect.ValueOf(ev).Elem()
	if _, err := r.readMembers(s.obj, v, path); err != nil {
		return nil, true, err
	}
	if err := s.obj.check(v, path); err != nil {
		return nil, true, err
	}
	return ev, true, nil
}

// blocks reads an array of grounded result blocks (docs/contract.md section 6).
func (r *reader) blocks(path string) ([]ResultBlock, error) {
	if err := r.array(refusal.CodeInvalidEvent, path, ""); err != nil {
		return nil, err
	}
	bs := []ResultBlock{}
	for i := 0; r.d.More(); i++ {
		b, err := r.block(path + "/" + itoa(i))
		if err != nil {
			return nil, err
		}
		bs = append(bs, b)
	}
	if err := r.d.End(); err != nil {
		return nil, r.fail(err, refusal.CodeInvalidEvent, path, "")
	}
	return bs, nil
}

// block reads one result block; its members may come in any order. A
// block carries only the members of its kind, and a report or ask keeps
// its JSON beside its value (codec_kept.go).
func (r *reader) block(path string) (ResultBlock, error) {
	if err := r.object(refusal.CodeInvalidEvent, path, ""); err != nil {
		return ResultBlock{}, err
	}
	var in blockWire
	seen, err := r.readMembers(blockSpec, reflect.ValueOf(&in).Elem(), path)
	if err != nil {
		return ResultBlock{}, err
	}
	hasText := seen&(1<<blockSpec.find([]byte("text"))) != 0
	b := ResultBlock{Kind: ResultBlockKind(in.Kind), Text: in.Text, Sources: in.Sources, Unknown: in.Unknown}
	switch b.Kind {
	case ResultBlockText:
		if !hasText {
			return b, missing(refusal.CodeInvalidEvent, path, "text")
		}
		if in.Report != nil || in.Ask != nil {
			return b, refusef(refusal.CodeInvalidEvent, path, "a text block carries only text and sources")
		}
	case ResultBlockReport:
		b.Report, err = keptBlock[blocks.ReportBlock](in.Report, hasText || b.Sources != nil || in.Ask != nil, path, "report")
		b.kept = in.Report
	case ResultBlockAsk:
		b.Ask, err = keptBlock[blocks.AskBlock](in.Ask, hasText || b.Sources != nil || in.Report != nil, path, "ask")
		b.kept = in.Ask
	}
	if err != nil {
		return b, err
	}
	return b, prefixed(b.validate(), path)
}

// keptBlock decodes raw, the member of a report or ask block at path,
// keeping nothing else: missing when raw is nil, refused when the block
// carries another kind's member (other).
func keptBlock[T any](raw []byte, other bool, path, member string) (*T, error) {
	if raw == nil {
		return nil, missing(refusal.CodeInvalidEvent, path, member)
	}
	if other {
		return nil, refusef(refusal.CodeInvalidEvent, path, "a %s block carries only its %s", member, member)
	}
	v := new(T)
	if err := decodeKept(raw, v, refusal.CodeInvalidEvent, path+"/"+member); err != nil {
		return nil, err
	}
	return v, nil
}

// appEvent reads an event whose type is not of docs/contract.md section 6: a product type
// the host registered becomes an *AppEvent with the raw object; any other
// type is unsupported-event (docs/contract.md section 6).
func (r *reader) appEvent(typ []byte, path string) (*AppEvent, error) {
	if r.reg == nil || !r.reg.has(typ) {
		return nil, refusef(refusal.CodeUnsupportedEvent, path+"/type", "event type %q is neither of version 1 nor registered by the host", typ)
	}
	v, err := r.d.Raw()
	if err != nil {
		return nil, r.fail(err, refusal.CodeInvalidEvent, path, "")
	}
	if s := r.reg.shapes[string(typ)]; s != nil { // a registered event: its members are checked, once
		return &AppEvent{Type: string(typ), Raw: v}, r.registered(s, v, path)
	}
	// The members other than "type" are the product's; only a case variant
	// of "type" is refused, since a case-folding consumer would read it as
	// the discriminator.
	check := strictjson.Get(v, "", 0, r.d.Depth(), r.maxDepth)
	defer strictjson.Put(check)
	sub := reader{d: check, prefix: r.prefix + path, maxDepth: r.maxDepth}
	if err := sub.object(refusal.CodeInvalidEnvelope, path, ""); err != nil {
		return nil, err
	}
	for check.More() {
		name, err := check.Name()
		if err != nil {
			return nil, sub.fail(err, refusal.CodeInvalidEvent, path, "")
		}
		if isCaseVariant(name, []string{"type"}) {
			return nil, refusef(refusal.CodeInvalidEnvelope, path+"/"+strictjson.EscapePointer(string(name)), "member name differs from \"type\" only by case")
		}
		if err := check.Skip(); err != nil {
			return nil, sub.fail(err, refusal.CodeInvalidEvent, path, "")
		}
	}
	return &AppEvent{Type: string(typ), Raw: v}, nil
}

// registered checks raw, the object of a registered event of s
// (docs/contract.md section 6.5), at path.
func (r *reader) registered(s *shape, raw []byte, path string) error {
	d := strictjson.Get(raw, string(raw), 0, r.d.Depth(), r.maxDepth)
	defer strictjson.Put(d)
	sub := reader{d: d, prefix: r.prefix + path, maxDepth: r.maxDepth}
	if err := sub.object(refusal.CodeInvalidEnvelope, path, ""); err != nil {
		return err
	}
	_, err := s.read(&sub, path)
	return err
}

// appendEvent writes ev as its canonical event object (docs/contract.md section 6); see
// writer.event. On a refusal dst is returned unchanged.
func appendEvent(dst []byte, ev Event, path string) ([]byte, error) {
	w := writer{dst: dst}
	w.event(ev, path)
	if w.err != nil {
		return dst, w.err
	}
	return w.dst, nil
}

// event writes ev as its canonical event object (docs/contract.md section 6): "type" first,
// then the members its descriptor lists, in order, absent optional members
// omitted, then the kept unknown members. It refuses an event that breaks
// the rules of its type, with path as the event's pointer, before writing
// any of it.
func (w *writer) event(ev Event, path string) {
	app, isApp := ev.(*AppEvent)
	if isApp && app != nil {
		if err := app.validate(path); err != nil {
			w.fail(err)
			return
		}
		w.fail(w.rawValue(app.Raw))
		return
	}
	var s *eventSpec
	var p unsafe.Pointer
	if ev != nil && !isApp {
		s = eventSpecOf(ev.EventType()) // a core type's EventType reads nothing of a nil event
		p = s.obj.at(ev)
	}
	if p == nil {
		w.fail(refusef(refusal.CodeInvalidEnvelope, path, "missing"))
		return
	}
	if s.obj.checked != 0 {
		if err := s.obj.check(reflect.ValueOf(ev).Elem(), path); err != nil {
			w.fail(err)
			return
		}
	}
	w.within(path, "", func() {
		w.open(s.typ)
		w.members(s.obj, p, path)
		w.close(s.obj.keptAt(p), s.obj.names)
	})
}

// validate checks that an app event hand-built for Marshal is an object
// whose "type" is e.Type and not a type of docs/contract.md section 6.
func (e *AppEvent) validate(path string) error {
	if _, core := EventChannel(e.Type); core || e.Type == "" {
		return refusef(refusal.CodeUnsupportedEvent, path+"/type", "an app event has a product type of its own")
	}
	typ, err := appEventType(e.Raw)
	if err != nil || typ != e.Type {
		return refuseWrap(refusal.CodeInvalidEvent, path, "Raw must be a strict JSON object whose type is Type", err)
	}
	return nil
}

// appEventType returns the "type" of a raw event object.
func appEventType(raw []byte) (string, error) {
	d := strictjson.Get(raw, string(raw), 0, 0, DefaultMaxDepth)
	defer strictjson.Put(d)
	r := reader{d: d, maxDepth: DefaultMaxDepth}
	typ, found, err := r.findType("")
	if err == nil && !found {
		err = missing(refusal.CodeInvalidEvent, "", "type")
	}
	if err == nil {
		if err = d.Finish(); err != nil {
			err = r.fail(err, refusal.CodeInvalidEvent, "", "")
		}
	}
	return typ, err
}

// MarshalJSON writes the canonical event object (see Event).
func (e *SessionEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// MarshalJSON writes the canonical event object (see Event).
func (e *LifecycleEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// MarshalJSON writes the canonical event object (see Event).
func (e *DeltaEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// MarshalJSON writes the canonical event object (see Event).
func (e *ToolCallEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// MarshalJSON writes the canonical event object (see Event).
func (e *ToolResultEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// MarshalJSON writes the canonical event object (see Event).
func (e *ResultEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// MarshalJSON writes the canonical event object (see Event).
func (e *ProvenanceEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// MarshalJSON writes the canonical event object (see Event).
func (e *ErrorEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// MarshalJSON writes the canonical event object (see Event).
func (e *CardEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// CardJSON returns the card's canonical JSON (docs/contract.md sections 3
// and 5.4), byte for byte the "card" member [CardEvent.MarshalJSON] and
// [ChatEventEnvelope.AppendJSON] write: the JSON [ParseEnvelope] read,
// unknown members kept and strings as written (no HTML escape), without
// insignificant whitespace, while Card still equals what it decodes to;
// else Card written member by member. The front-end bridges carry a card
// so (section 18). A card that breaks section 3 or cannot be written is
// refused with invalid-card at its pointer within the card.
func (e *CardEvent) CardJSON() (json.RawMessage, error) {
	if e == nil {
		return nil, refusef(refusal.CodeInvalidCard, "", "missing")
	}
	if err := validateCardSnapshot(&e.Card); err != nil {
		return nil, err
	}
	w := writer{}
	writeKept(&w, &e.Card, e.kept, refusal.CodeInvalidCard, "")
	if w.err != nil {
		return nil, w.err
	}
	return w.dst, nil
}

// MarshalJSON writes the canonical event object (see Event).
func (e *CardClosedEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// MarshalJSON writes the canonical event object (see Event).
func (e *StateEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// MarshalJSON writes the canonical event object (see Event).
func (e *CapabilitiesEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// MarshalJSON writes the canonical event object (see Event).
func (e *NavigateEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }

// MarshalJSON writes the canonical event object (see Event).
func (e *AppEvent) MarshalJSON() ([]byte, error) { return appendEvent(nil, e, "") }
