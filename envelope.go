package chatprotocol

import (
	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// ChatEventEnvelope is one version-1 frame (docs/contract.md section 5):
//
//	{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,
//	 "event":{"type":"delta","text":"Hel"}}
//
// The ids are chosen by the host: non-empty, at most 256 bytes; no parser
// invents one. Seq counts the turn's envelopes from 1, contiguously, up to
// [MaxSeq]. Event is required. At is an optional RFC 3339 timestamp,
// informational only ("" when absent). Unknown holds the envelope's
// members this version does not define, kept for re-emission; the members
// of the event and its parts are kept in their own Unknown fields.
//
// schemaVersion is not a field: an envelope is version 1 by type, and
// MarshalJSON and AppendJSON always write "schemaVersion":1.
type ChatEventEnvelope struct {
	ConversationID string
	TurnID         string
	EventID        string
	Seq            int64
	Event          Event
	At             string
	Unknown        []Member
}

// SchemaVersion is the schemaVersion of every [ChatEventEnvelope] and
// [ChatStateV1] (docs/contract.md section 5).
const SchemaVersion = 1

// MaxSeq is the largest seq an envelope may carry, 2^53-1, the largest
// integer every JSON reader represents exactly (docs/contract.md section 5).
const MaxSeq = 1<<53 - 1

// The default limits of an [EnvelopeParser].
const (
	// DefaultMaxFrameBytes is the largest frame accepted by default: 1 MiB
	// (docs/contract.md section 5).
	DefaultMaxFrameBytes = 1 << 20
	// DefaultMaxDepth is the deepest nesting accepted by default, counting
	// the envelope object as depth 1 and its event as depth 2.
	DefaultMaxDepth = 64
)

// envelopeNames are the envelope's members in canonical order.
var envelopeNames = []string{"schemaVersion", "conversationId", "turnId", "eventId", "seq", "event", "at"}

// ParserOptions configures an [EnvelopeParser]. A nil *ParserOptions, and
// every zero field, means the default.
type ParserOptions struct {
	// MaxFrameBytes is the largest frame accepted, in bytes; 0 means
	// [DefaultMaxFrameBytes] (1 MiB) and a negative value means no limit.
	// A larger frame is refused with frame-too-large before it is read.
	MaxFrameBytes int
	// MaxDepth is the deepest nesting of objects and arrays accepted,
	// counting the envelope as 1; 0 means [DefaultMaxDepth] (64) and a
	// negative value leaves only the tokenizer's own bound of 10000. Deeper
	// frames are invalid-envelope.
	MaxDepth int
	// Registry lists the host's product event types; nil registers none,
	// so every type outside docs/contract.md section 6 is unsupported-event.
	Registry *Registry
}

// EnvelopeParser reads version-1 frames with configured limits and
// registry. It is immutable and safe for concurrent use. Make one with
// [NewEnvelopeParser]: the zero EnvelopeParser has a size limit of 0 bytes
// and refuses every frame with frame-too-large.
type EnvelopeParser struct {
	maxFrame int
	maxDepth int
	reg      *Registry
}

// NewEnvelopeParser returns a parser with opts; nil means the defaults,
// which are those of [ParseEnvelope].
func NewEnvelopeParser(opts *ParserOptions) *EnvelopeParser {
	p := &EnvelopeParser{maxFrame: DefaultMaxFrameBytes, maxDepth: DefaultMaxDepth}
	if opts != nil {
		p.configure(opts)
	}
	return p
}

func (p *EnvelopeParser) configure(opts *ParserOptions) {
	switch {
	case opts.MaxFrameBytes > 0:
		p.maxFrame = opts.MaxFrameBytes
	case opts.MaxFrameBytes < 0:
		p.maxFrame = -1
	}
	switch {
	case opts.MaxDepth > 0:
		p.maxDepth = opts.MaxDepth
	case opts.MaxDepth < 0:
		p.maxDepth = 10000
	}
	p.reg = opts.Registry
}

// ParseEnvelope reads one version-1 frame with the default limits (1 MiB,
// depth 64) and no product types. See [EnvelopeParser.Parse] for the rules
// and the refusals.
func ParseEnvelope(data []byte) (ChatEventEnvelope, error) {
	p := EnvelopeParser{maxFrame: DefaultMaxFrameBytes, maxDepth: DefaultMaxDepth}
	return p.Parse(data)
}

// Parse reads one version-1 frame (docs/contract.md sections 5 and 6) and
// returns the envelope, or a [*refusal.Error] and a zero envelope. The
// checks run in the order of section 5.3: the size limit
// (frame-too-large, before the frame is read); schemaVersion
// (unsupported-version when missing or not the number 1; invalid-envelope
// for JSON that breaks before it is found); then the first violation in
// reading order:
//
//   - invalid-envelope: not one JSON object; a duplicated name, or one that
//     differs from a name of the contract only by case; invalid UTF-8;
//     nesting beyond the depth limit; an id missing, not a string, empty
//     or over 256 bytes; a seq not an integer in 1..[MaxSeq]; an "at" that
//     is not RFC 3339; a missing event;
//   - unsupported-event: an event type neither of section 6 nor registered;
//   - invalid-event, missing-call-id, unknown-result-status, invalid-card:
//     the event's own rules (section 6).
//
// Every refusal carries the JSON pointer of the offending member. Unknown
// members are kept at every level, for [ChatEventEnvelope.MarshalJSON] and
// [ChatEventEnvelope.AppendJSON]. The envelope does not refer to data; its
// strings share one copy of the frame, and raw JSON members are copies of
// their own. Parse makes two allocations for a delta frame.
func (p *EnvelopeParser) Parse(data []byte) (ChatEventEnvelope, error) {
	if p.maxFrame >= 0 && len(data) > p.maxFrame {
		return ChatEventEnvelope{}, refusef(refusal.CodeFrameTooLarge, "", "frame of %d bytes exceeds the limit of %d", len(data), p.maxFrame)
	}
	if !strictjson.StartsWithMember(data, "schemaVersion") {
		if err := p.findSchemaVersion(data); err != nil {
			return ChatEventEnvelope{}, err
		}
	}
	src := string(data)
	d := strictjson.Get(data, src, 0, 0, p.maxDepth)
	defer strictjson.Put(d)
	r := reader{d: d, maxDepth: p.maxDepth, reg: p.reg}
	var env ChatEventEnvelope
	if err := r.envelope(&env); err != nil {
		return ChatEventEnvelope{}, err
	}
	return env, nil
}

// findSchemaVersion reads the top level of a frame whose first member is
// not schemaVersion, looking for it, so that the version is checked before
// anything else (docs/contract.md sections 1 and 5).
func (p *EnvelopeParser) findSchemaVersion(data []byte) error {
	d := strictjson.Get(data, "", 0, 0, p.maxDepth)
	defer strictjson.Put(d)
	r := reader{d: d, maxDepth: p.maxDepth}
	if err := r.frameObject(); err != nil {
		return err
	}
	for d.More() {
		name, err := d.Name()
		if err != nil {
			return r.fail(err, refusal.CodeInvalidEnvelope, "", "")
		}
		if string(name) == "schemaVersion" {
			return r.schemaVersion()
		}
		if err := d.Skip(); err != nil {
			return r.fail(err, refusal.CodeInvalidEnvelope, "", "")
		}
	}
	if err := d.End(); err != nil {
		return r.fail(err, refusal.CodeInvalidEnvelope, "", "")
	}
	return refusef(refusal.CodeUnsupportedVersion, "/schemaVersion", "missing: an unversioned frame is legacy0, read only by the legacy adapters")
}

// schemaVersion reads the value of schemaVersion, which must be the JSON
// number 1.
func (r *reader) schemaVersion() error {
	v, err := r.d.Integer()
	if err != nil {
		if _, syntax := err.(*strictjson.SyntaxError); syntax {
			return r.fail(err, refusal.CodeInvalidEnvelope, "", "schemaVersion")
		}
		return refuseWrap(refusal.CodeUnsupportedVersion, "/schemaVersion", "schemaVersion must be the number 1", err)
	}
	if v != SchemaVersion {
		return refusef(refusal.CodeUnsupportedVersion, "/schemaVersion", "schemaVersion %d is not supported; this reader speaks 1", v)
	}
	return nil
}

// envelope reads the whole frame into env.
func (r *reader) envelope(env *ChatEventEnvelope) error {
	if err := r.frameObject(); err != nil {
		return err
	}
	var seen uint8 // bit i: envelopeNames[i] was read
	err := r.members(refusal.CodeInvalidEnvelope, "", envelopeNames, &env.Unknown, func(name []byte) (bool, error) {
		switch string(name) {
		case "schemaVersion":
			seen |= 1 << 0
			return true, r.schemaVersion()
		case "conversationId":
			seen |= 1 << 1
			return true, r.id(&env.ConversationID, "conversationId")
		case "turnId":
			seen |= 1 << 2
			return true, r.id(&env.TurnID, "turnId")
		case "eventId":
			seen |= 1 << 3
			return true, r.id(&env.EventID, "eventId")
		case "seq":
			seen |= 1 << 4
			if err := r.integer(&env.Seq, refusal.CodeInvalidEnvelope, "", "seq"); err != nil {
				return true, err
			}
			return true, checkSeq(env.Seq)
		case "at":
			if err := r.str(&env.At, refusal.CodeInvalidEnvelope, "", "at"); err != nil {
				return true, err
			}
			return true, checkAt(env.At)
		case "event":
			seen |= 1 << 5
			ev, err := r.event("/event")
			env.Event = ev
			return true, err
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if err := r.d.Finish(); err != nil {
		return r.fail(err, refusal.CodeInvalidEnvelope, "", "")
	}
	if seen&1 == 0 {
		return refusef(refusal.CodeUnsupportedVersion, "/schemaVersion", "missing")
	}
	for i, name := range envelopeNames {
		if seen&(1<<i) == 0 && name != "at" {
			return missing(refusal.CodeInvalidEnvelope, "", name) // every member but at is required
		}
	}
	return nil
}

// frameObject reads the '{' that opens a frame.
func (r *reader) frameObject() error {
	err := r.d.Begin('{')
	if err == strictjson.ErrWrongType {
		return refusef(refusal.CodeInvalidEnvelope, "", "a frame is one JSON object")
	}
	if err != nil {
		return r.fail(err, refusal.CodeInvalidEnvelope, "", "")
	}
	return nil
}

// id reads one of the envelope's ids (docs/contract.md section 5).
func (r *reader) id(dst *string, member string) error {
	if err := r.str(dst, refusal.CodeInvalidEnvelope, "", member); err != nil {
		return err
	}
	return checkID(refusal.CodeInvalidEnvelope, "", member, *dst)
}

// checkSeq enforces 1 <= seq <= MaxSeq (docs/contract.md section 5).
func checkSeq(seq int64) error {
	if seq < 1 || seq > MaxSeq {
		return refusef(refusal.CodeInvalidEnvelope, "/seq", "seq %d is outside 1..2^53-1", seq)
	}
	return nil
}

// checkAt enforces the RFC 3339 form of an envelope's timestamp (see
// parseRFC3339).
func checkAt(at string) error {
	if _, ok := parseRFC3339(at); !ok {
		return refusef(refusal.CodeInvalidEnvelope, "/at", "%.64q is not an RFC 3339 timestamp", at)
	}
	return nil
}

// AppendJSON appends the canonical wire form of the envelope to dst: one
// line of JSON without insignificant whitespace, members in the order
// schemaVersion, conversationId, turnId, eventId, seq, event, at, then the
// kept unknown members; the event is written by its type's rules (see
// Event). It refuses, with the codes [ParseEnvelope] uses, an envelope that
// [ParseEnvelope] would refuse, so what it writes always parses back; on a
// refusal dst is returned unchanged. Its refusals are exactly Validate's.
func (e *ChatEventEnvelope) AppendJSON(dst []byte) ([]byte, error) {
	return e.appendForm(dst, false)
}

// appendForm appends the canonical wire form of the envelope, or with
// digest its digest form (see writer), to dst, as AppendJSON does.
func (e *ChatEventEnvelope) appendForm(dst []byte, digest bool) ([]byte, error) {
	w := writer{dst: dst, digest: digest}
	e.write(&w)
	if w.err != nil {
		return dst, w.err
	}
	return w.dst, nil
}

// Validate returns the refusal AppendJSON would return for the envelope,
// the same code and path, or nil when AppendJSON would write it. It walks
// the envelope as AppendJSON does, writing nothing: a valid envelope costs
// no allocation unless it holds a card or a report or ask block, which the
// card validators check, and which, when their kept JSON no longer matches
// their value, are checked by encoding the value, their rule being the
// encoder's. Like AppendJSON it only reads the envelope, so it is safe to
// call from several goroutines on an envelope nobody modifies.
func (e *ChatEventEnvelope) Validate() error {
	w := writer{check: true}
	e.write(&w)
	return w.err
}

// write walks the envelope for AppendJSON and Validate: the id, seq and
// at rules first (docs/contract.md section 5), then the members in canonical order.
func (e *ChatEventEnvelope) write(w *writer) {
	for _, id := range [...]struct{ member, id string }{
		{"conversationId", e.ConversationID}, {"turnId", e.TurnID}, {"eventId", e.EventID},
	} {
		if err := checkID(refusal.CodeInvalidEnvelope, "", id.member, id.id); err != nil {
			w.fail(err)
			return
		}
	}
	if err := checkSeq(e.Seq); err != nil {
		w.fail(err)
		return
	}
	if e.At != "" {
		if err := checkAt(e.At); err != nil {
			w.fail(err)
			return
		}
	}
	w.code = refusal.CodeInvalidEnvelope
	w.punct('{')
	w.int("schemaVersion", SchemaVersion)
	w.str("conversationId", e.ConversationID)
	w.str("turnId", e.TurnID)
	w.str("eventId", e.EventID)
	w.int("seq", e.Seq)
	w.name("event")
	w.event(e.Event, "/event")
	w.optStr("at", e.At)
	w.close(e.Unknown, envelopeNames)
}

// MarshalJSON returns the canonical wire form (see AppendJSON).
func (e ChatEventEnvelope) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil) }

// UnmarshalJSON reads data with [ParseEnvelope]: default limits, no product
// types. Use an [EnvelopeParser] to register product types.
func (e *ChatEventEnvelope) UnmarshalJSON(data []byte) error {
	env, err := ParseEnvelope(data)
	if err != nil {
		return err
	}
	*e = env
	return nil
}

// Channel returns the channel of the envelope's event: the one of docs/contract.md section 6
// for its types, or reg's for a product type (reg may be nil). ok is false
// for an envelope without event or of an unregistered type.
func (e *ChatEventEnvelope) Channel(reg *Registry) (ch Channel, ok bool) {
	if e.Event == nil {
		return 0, false
	}
	return reg.Channel(e.Event.EventType())
}
