package chatprotocol

import (
	"reflect"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/Papercusp/chat-protocol-go/blocks"
	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
)

// The member names of each object of section 6, in canonical order. A name
// that differs from one of these only by case is refused; any other name
// is kept as an unknown member.
var (
	sessionNames      = []string{"type", "sessionId"}
	lifecycleNames    = []string{"type", "status", "reason", "usage"}
	usageNames        = []string{"totalTokens", "costUsd"}
	deltaNames        = []string{"type", "text"}
	toolCallNames     = []string{"type", "callId", "name", "input"}
	toolResultNames   = []string{"type", "callId", "status", "output", "blocks"}
	resultNames       = []string{"type", "blocks"}
	blockNames        = []string{"kind", "text", "sources", "report", "ask"}
	sourceNames       = []string{"ref", "label"}
	provenanceNames   = []string{"type", "provider", "model", "requestId"}
	errorNames        = []string{"type", "code", "message", "retryable", "retryAfterMs"}
	cardNames         = []string{"type", "card"}
	cardClosedNames   = []string{"type", "correlationId", "outcome"}
	stateNames        = []string{"type", "version", "snapshot"}
	capabilitiesNames = []string{"type", "capabilities"}
	navigateNames     = []string{"type", "href"}
	appNames          = []string{"type"}
)

// event reads the event object at path (section 6). Canonical producers
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

// coreEvent reads an event of a type of section 6. known is false, and
// nothing is read, for any other type.
func (r *reader) coreEvent(typ, path string) (ev Event, known bool, err error) {
	switch typ {
	case EventTypeDelta:
		ev, err = r.delta(path)
	case EventTypeToolCall:
		ev, err = r.toolCall(path)
	case EventTypeToolResult:
		ev, err = r.toolResult(path)
	case EventTypeLifecycle:
		ev, err = r.lifecycle(path)
	case EventTypeSession:
		ev, err = r.session(path)
	case EventTypeResult:
		ev, err = r.result(path)
	case EventTypeProvenance:
		ev, err = r.provenance(path)
	case EventTypeError:
		ev, err = r.errorEvent(path)
	case EventTypeCard:
		ev, err = r.card(path)
	case EventTypeCardClosed:
		ev, err = r.cardClosed(path)
	case EventTypeState:
		ev, err = r.state(path)
	case EventTypeCapabilities:
		ev, err = r.capabilities(path)
	case EventTypeNavigate:
		ev, err = r.navigate(path)
	default:
		return nil, false, nil
	}
	if err != nil {
		return nil, true, err
	}
	return ev, true, nil
}

// eventMembers reads the event object at path: its '{', its members and its
// '}'. The "type" member, on which the caller was dispatched, is skipped;
// member handles the others as in members.
func (r *reader) eventMembers(path string, known []string, unknown *[]Member, member func(name []byte) (bool, error)) error {
	if err := r.object(refusal.CodeInvalidEnvelope, path, ""); err != nil {
		return err
	}
	return r.members(refusal.CodeInvalidEvent, path, known, unknown, func(name []byte) (bool, error) {
		if string(name) != "type" {
			return member(name)
		}
		if err := r.d.Skip(); err != nil {
			return true, r.fail(err, refusal.CodeInvalidEvent, path, "type")
		}
		return true, nil
	})
}

func (r *reader) delta(path string) (*DeltaEvent, error) {
	e := new(DeltaEvent)
	if err := r.stringEvent(path, "text", deltaNames, &e.Text, &e.Unknown); err != nil {
		return nil, err
	}
	return e, nil
}

// stringEvent reads an event whose one member is the required string
// member (delta, session, navigate).
func (r *reader) stringEvent(path, member string, known []string, dst *string, unknown *[]Member) error {
	has := false
	err := r.eventMembers(path, known, unknown, func(name []byte) (bool, error) {
		if string(name) != member {
			return false, nil
		}
		has = true
		return true, r.str(dst, refusal.CodeInvalidEvent, path, member)
	})
	if err == nil && !has {
		err = missing(refusal.CodeInvalidEvent, path, member)
	}
	return err
}

func (r *reader) session(path string) (*SessionEvent, error) {
	e := new(SessionEvent)
	if err := r.stringEvent(path, "sessionId", sessionNames, &e.SessionID, &e.Unknown); err != nil {
		return nil, err
	}
	return e, e.validate(path)
}

func (r *reader) lifecycle(path string) (*LifecycleEvent, error) {
	e := new(LifecycleEvent)
	hasStatus := false
	err := r.eventMembers(path, lifecycleNames, &e.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "status":
			hasStatus = true
			var s string
			err := r.str(&s, refusal.CodeInvalidEvent, path, "status")
			e.Status = LifecycleStatus(s)
			return true, err
		case "reason":
			return true, r.str(&e.Reason, refusal.CodeInvalidEvent, path, "reason")
		case "usage":
			u, err := r.usage(path + "/usage")
			e.Usage = u
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if !hasStatus {
		return nil, missing(refusal.CodeInvalidEvent, path, "status")
	}
	return e, e.validate(path)
}

func (r *reader) usage(path string) (*Usage, error) {
	if err := r.object(refusal.CodeInvalidEvent, path, ""); err != nil {
		return nil, err
	}
	u := new(Usage)
	err := r.members(refusal.CodeInvalidEvent, path, usageNames, &u.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "totalTokens":
			var n int64
			err := r.integer(&n, refusal.CodeInvalidEvent, path, "totalTokens")
			u.TotalTokens = &n
			return true, err
		case "costUsd":
			f, err := r.d.Float()
			if err != nil {
				return true, r.fail(err, refusal.CodeInvalidEvent, path, "costUsd")
			}
			u.CostUSD = &f
			return true, nil
		}
		return false, nil
	})
	return u, err
}

func (r *reader) toolCall(path string) (*ToolCallEvent, error) {
	e := new(ToolCallEvent)
	hasName := false
	err := r.eventMembers(path, toolCallNames, &e.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "callId":
			return true, r.str(&e.CallID, refusal.CodeMissingCallID, path, "callId")
		case "name":
			hasName = true
			return true, r.str(&e.Name, refusal.CodeInvalidEvent, path, "name")
		case "input":
			return true, r.raw((*[]byte)(&e.Input), refusal.CodeInvalidEvent, path, "input")
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if e.CallID == "" {
		return nil, refusef(refusal.CodeMissingCallID, path+"/callId", "a tool call needs a stable call id")
	}
	if !hasName {
		return nil, missing(refusal.CodeInvalidEvent, path, "name")
	}
	return e, e.validate(path)
}

func (r *reader) toolResult(path string) (*ToolResultEvent, error) {
	e := new(ToolResultEvent)
	err := r.eventMembers(path, toolResultNames, &e.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "callId":
			return true, r.str(&e.CallID, refusal.CodeMissingCallID, path, "callId")
		case "status":
			var s string
			err := r.str(&s, refusal.CodeUnknownResultStatus, path, "status")
			e.Status = ToolResultStatus(s)
			return true, err
		case "output":
			return true, r.raw((*[]byte)(&e.Output), refusal.CodeInvalidEvent, path, "output")
		case "blocks":
			bs, err := r.blocks(path + "/blocks")
			e.Blocks = bs
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if e.CallID == "" {
		return nil, refusef(refusal.CodeMissingCallID, path+"/callId", "a tool result needs the stable call id of its call")
	}
	return e, e.validate(path)
}

func (r *reader) result(path string) (*ResultEvent, error) {
	e := new(ResultEvent)
	hasBlocks := false
	err := r.eventMembers(path, resultNames, &e.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "blocks":
			hasBlocks = true
			bs, err := r.blocks(path + "/blocks")
			e.Blocks = bs
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if !hasBlocks {
		return nil, missing(refusal.CodeInvalidEvent, path, "blocks")
	}
	return e, e.validate(path)
}

// blocks reads an array of grounded result blocks (section 6).
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

// block reads one result block; its members may come in any order.
func (r *reader) block(path string) (ResultBlock, error) {
	var b ResultBlock
	if err := r.object(refusal.CodeInvalidEvent, path, ""); err != nil {
		return b, err
	}
	var kind string
	var hasKind, hasText bool
	var report, ask []byte
	err := r.members(refusal.CodeInvalidEvent, path, blockNames, &b.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "kind":
			hasKind = true
			return true, r.str(&kind, refusal.CodeInvalidEvent, path, "kind")
		case "text":
			hasText = true
			return true, r.str(&b.Text, refusal.CodeInvalidEvent, path, "text")
		case "sources":
			ss, err := r.sources(path + "/sources")
			b.Sources = ss
			return true, err
		case "report":
			return true, r.raw(&report, refusal.CodeInvalidEvent, path, "report")
		case "ask":
			return true, r.raw(&ask, refusal.CodeInvalidEvent, path, "ask")
		}
		return false, nil
	})
	if err != nil {
		return b, err
	}
	if !hasKind {
		return b, missing(refusal.CodeInvalidEvent, path, "kind")
	}
	b.Kind = ResultBlockKind(kind)
	switch b.Kind {
	case ResultBlockText:
		if !hasText {
			return b, missing(refusal.CodeInvalidEvent, path, "text")
		}
		if report != nil || ask != nil {
			return b, refusef(refusal.CodeInvalidEvent, path, "a text block carries only text and sources")
		}
	case ResultBlockReport:
		if report == nil {
			return b, missing(refusal.CodeInvalidEvent, path, "report")
		}
		if hasText || b.Sources != nil || ask != nil {
			return b, refusef(refusal.CodeInvalidEvent, path, "a report block carries only its report")
		}
		b.Report = new(blocks.ReportBlock)
		if err := decodeKept(report, b.Report, refusal.CodeInvalidEvent, path+"/report"); err != nil {
			return b, err
		}
		b.kept = report
	case ResultBlockAsk:
		if ask == nil {
			return b, missing(refusal.CodeInvalidEvent, path, "ask")
		}
		if hasText || b.Sources != nil || report != nil {
			return b, refusef(refusal.CodeInvalidEvent, path, "an ask block carries only its ask")
		}
		b.Ask = new(blocks.AskBlock)
		if err := decodeKept(ask, b.Ask, refusal.CodeInvalidEvent, path+"/ask"); err != nil {
			return b, err
		}
		b.kept = ask
	}
	return b, prefixed(b.validate(), path)
}

// sources reads the sources of a text block.
func (r *reader) sources(path string) ([]Source, error) {
	if err := r.array(refusal.CodeInvalidEvent, path, ""); err != nil {
		return nil, err
	}
	ss := []Source{}
	for i := 0; r.d.More(); i++ {
		p := path + "/" + itoa(i)
		if err := r.object(refusal.CodeInvalidEvent, p, ""); err != nil {
			return nil, err
		}
		var s Source
		hasRef := false
		err := r.members(refusal.CodeInvalidEvent, p, sourceNames, &s.Unknown, func(name []byte) (bool, error) {
			switch string(name) {
			case "ref":
				hasRef = true
				return true, r.str(&s.Ref, refusal.CodeInvalidEvent, p, "ref")
			case "label":
				return true, r.str(&s.Label, refusal.CodeInvalidEvent, p, "label")
			}
			return false, nil
		})
		if err != nil {
			return nil, err
		}
		if !hasRef {
			return nil, missing(refusal.CodeInvalidEvent, p, "ref")
		}
		ss = append(ss, s)
	}
	if err := r.d.End(); err != nil {
		return nil, r.fail(err, refusal.CodeInvalidEvent, path, "")
	}
	return ss, nil
}

func (r *reader) provenance(path string) (*ProvenanceEvent, error) {
	e := new(ProvenanceEvent)
	err := r.eventMembers(path, provenanceNames, &e.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "provider":
			return true, r.str(&e.Provider, refusal.CodeInvalidEvent, path, "provider")
		case "model":
			return true, r.str(&e.Model, refusal.CodeInvalidEvent, path, "model")
		case "requestId":
			return true, r.str(&e.RequestID, refusal.CodeInvalidEvent, path, "requestId")
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return e, e.validate(path)
}

func (r *reader) errorEvent(path string) (*ErrorEvent, error) {
	e := new(ErrorEvent)
	var hasMessage, hasRetryable bool
	err := r.eventMembers(path, errorNames, &e.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "code":
			return true, r.str(&e.Code, refusal.CodeInvalidEvent, path, "code")
		case "message":
			hasMessage = true
			return true, r.str(&e.Message, refusal.CodeInvalidEvent, path, "message")
		case "retryable":
			hasRetryable = true
			return true, r.boolean(&e.Retryable, refusal.CodeInvalidEvent, path, "retryable")
		case "retryAfterMs":
			var n int64
			err := r.integer(&n, refusal.CodeInvalidEvent, path, "retryAfterMs")
			e.RetryAfterMs = &n
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if !hasMessage {
		return nil, missing(refusal.CodeInvalidEvent, path, "message")
	}
	if !hasRetryable {
		return nil, refusef(refusal.CodeInvalidEvent, path+"/retryable", "missing: an error states whether it is retryable")
	}
	return e, e.validate(path)
}

func (r *reader) card(path string) (*CardEvent, error) {
	e := new(CardEvent)
	var card []byte
	err := r.eventMembers(path, cardNames, &e.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "card":
			v, err := r.d.RawObject()
			if err != nil {
				return true, r.fail(err, refusal.CodeInvalidEvent, path, "card")
			}
			card = v
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if card == nil {
		return nil, missing(refusal.CodeInvalidEvent, path, "card")
	}
	if err := decodeKept(card, &e.Card, refusal.CodeInvalidCard, path+"/card"); err != nil {
		return nil, err
	}
	e.kept = card
	return e, e.validate(path)
}

func (r *reader) cardClosed(path string) (*CardClosedEvent, error) {
	e := new(CardClosedEvent)
	err := r.eventMembers(path, cardClosedNames, &e.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "correlationId":
			return true, r.str(&e.CorrelationID, refusal.CodeInvalidEvent, path, "correlationId")
		case "outcome":
			return true, r.str(&e.Outcome, refusal.CodeInvalidEvent, path, "outcome")
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	return e, e.validate(path)
}

func (r *reader) state(path string) (*StateEvent, error) {
	e := new(StateEvent)
	hasVersion := false
	err := r.eventMembers(path, stateNames, &e.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "version":
			hasVersion = true
			return true, r.integer(&e.Version, refusal.CodeInvalidEvent, path, "version")
		case "snapshot":
			return true, r.raw((*[]byte)(&e.Snapshot), refusal.CodeInvalidEvent, path, "snapshot")
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if !hasVersion {
		return nil, missing(refusal.CodeInvalidEvent, path, "version")
	}
	return e, e.validate(path)
}

func (r *reader) capabilities(path string) (*CapabilitiesEvent, error) {
	e := new(CapabilitiesEvent)
	hasCaps := false
	err := r.eventMembers(path, capabilitiesNames, &e.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "capabilities":
			hasCaps = true
			return true, r.chatCapabilities(&e.Capabilities, refusal.CodeInvalidEvent, path+"/capabilities")
		}
		return false, nil
	})
	if err != nil {
		return nil, err
	}
	if !hasCaps {
		return nil, missing(refusal.CodeInvalidEvent, path, "capabilities")
	}
	return e, nil
}

func (r *reader) navigate(path string) (*NavigateEvent, error) {
	e := new(NavigateEvent)
	if err := r.stringEvent(path, "href", navigateNames, &e.Href, &e.Unknown); err != nil {
		return nil, err
	}
	return e, e.validate(path)
}

// appEvent reads an event whose type is not of section 6: a product type
// the host registered becomes an *AppEvent with the raw object; any other
// type is unsupported-event (section 6).
func (r *reader) appEvent(typ []byte, path string) (*AppEvent, error) {
	if r.reg == nil || !r.reg.has(typ) {
		return nil, refusef(refusal.CodeUnsupportedEvent, path+"/type", "event type %q is neither of version 1 nor registered by the host", typ)
	}
	v, err := r.d.Raw()
	if err != nil {
		return nil, r.fail(err, refusal.CodeInvalidEvent, path, "")
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
		if isCaseVariant(name, appNames) {
			return nil, refusef(refusal.CodeInvalidEnvelope, path+"/"+escapePointer(string(name)), "member name differs from \"type\" only by case")
		}
		if err := check.Skip(); err != nil {
			return nil, sub.fail(err, refusal.CodeInvalidEvent, path, "")
		}
	}
	return &AppEvent{Type: string(typ), Raw: v}, nil
}

// appendEvent writes ev as its canonical event object (section 6); see
// writer.event. On a refusal dst is returned unchanged.
func appendEvent(dst []byte, ev Event, path string) ([]byte, error) {
	w := writer{dst: dst}
	w.event(ev, path)
	if w.err != nil {
		return dst, w.err
	}
	return w.dst, nil
}

// event writes ev as its canonical event object (section 6): "type" first,
// then the members in the order of the contract's table, absent optional
// members omitted, then the kept unknown members. It refuses an event
// that breaks the rules of its type, with path as the event's pointer,
// before writing any of it.
func (w *writer) event(ev Event, path string) {
	if ev == nil || reflect.ValueOf(ev).IsNil() {
		w.fail(refusef(refusal.CodeInvalidEnvelope, path, "missing"))
		return
	}
	if err := validateEvent(ev, path); err != nil {
		w.fail(err)
		return
	}
	outerPath, outerCode := w.path, w.code
	w.path, w.code = path, ""
	w.eventMembers(ev, path)
	w.path, w.code = outerPath, outerCode
}

// validateEvent applies the value rules of ev's type (section 6).
func validateEvent(ev Event, path string) error {
	switch e := ev.(type) {
	case *SessionEvent:
		return e.validate(path)
	case *LifecycleEvent:
		return e.validate(path)
	case *ToolCallEvent:
		return e.validate(path)
	case *ToolResultEvent:
		return e.validate(path)
	case *ResultEvent:
		return e.validate(path)
	case *ProvenanceEvent:
		return e.validate(path)
	case *ErrorEvent:
		return e.validate(path)
	case *CardEvent:
		return e.validate(path)
	case *CardClosedEvent:
		return e.validate(path)
	case *StateEvent:
		return e.validate(path)
	case *NavigateEvent:
		return e.validate(path)
	case *AppEvent:
		return e.validate(path)
	}
	return nil // delta and capabilities: every value their members hold is valid
}

// eventMembers writes the object of a validated event; path is the event's
// pointer, for the capabilities of a capabilities event.
func (w *writer) eventMembers(ev Event, path string) {
	switch e := ev.(type) {
	case *SessionEvent:
		w.open(EventTypeSession)
		w.str("sessionId", e.SessionID)
		w.close(e.Unknown, sessionNames)
	case *LifecycleEvent:
		w.open(EventTypeLifecycle)
		w.str("status", string(e.Status))
		w.optStr("reason", e.Reason)
		if e.Usage != nil {
			w.name("usage")
			w.usage(e.Usage)
		}
		w.close(e.Unknown, lifecycleNames)
	case *DeltaEvent:
		w.open(EventTypeDelta)
		w.str("text", e.Text)
		w.close(e.Unknown, deltaNames)
	case *ToolCallEvent:
		w.open(EventTypeToolCall)
		w.str("callId", e.CallID)
		w.str("name", e.Name)
		w.optRaw("input", e.Input)
		w.close(e.Unknown, toolCallNames)
	case *ToolResultEvent:
		w.open(EventTypeToolResult)
		w.str("callId", e.CallID)
		w.result(string(e.Status), e.Output, e.Blocks)
		w.close(e.Unknown, toolResultNames)
	case *ResultEvent:
		w.open(EventTypeResult)
		w.name("blocks")
		w.blocks(e.Blocks)
		w.close(e.Unknown, resultNames)
	case *ProvenanceEvent:
		w.open(EventTypeProvenance)
		w.provenance(e.Provider, e.Model, e.RequestID)
		w.close(e.Unknown, provenanceNames)
	case *ErrorEvent:
		w.open(EventTypeError)
		w.errorMembers(e.Code, e.Message, e.Retryable, e.RetryAfterMs)
		w.close(e.Unknown, errorNames)
	case *CardEvent:
		w.open(EventTypeCard)
		w.name("card")
		writeKept(w, &e.Card, e.kept, refusal.CodeInvalidCard, path+"/card")
		w.close(e.Unknown, cardNames)
	case *CardClosedEvent:
		w.open(EventTypeCardClosed)
		w.str("correlationId", e.CorrelationID)
		w.optStr("outcome", e.Outcome)
		w.close(e.Unknown, cardClosedNames)
	case *StateEvent:
		w.open(EventTypeState)
		w.int("version", e.Version)
		w.optRaw("snapshot", e.Snapshot)
		w.close(e.Unknown, stateNames)
	case *CapabilitiesEvent:
		w.open(EventTypeCapabilities)
		w.name("capabilities")
		e.Capabilities.write(w, path+"/capabilities")
		w.close(e.Unknown, capabilitiesNames)
	case *NavigateEvent:
		w.open(EventTypeNavigate)
		w.str("href", e.Href)
		w.close(e.Unknown, navigateNames)
	case *AppEvent:
		w.rawValue(e.Raw)
	}
}

// validate checks that an app event hand-built for Marshal is an object
// whose "type" is e.Type and not a type of section 6.
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
