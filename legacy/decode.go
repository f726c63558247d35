package legacy

import (
	"bytes"
	"math"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// DecodeLegacyChatFrame reads one unversioned frame (the JSON text of an
// SSE data field) of dialect d into a typed legacy [Frame]
// (docs/contract.md section 9.2). Unlike [ParseChatEvent], which never
// fails, it refuses what cannot be upgraded faithfully:
//
//   - unsupported-version: d is not [Scout] or [Papercusp]; or the frame is
//     an object with a "schemaVersion" member, checked first (path
//     /schemaVersion);
//   - invalid-event: not a JSON object (path ""), no string "type" (path
//     /type), or a type of the dialect whose members do not fit it (the
//     path of the first member that does not, however deep);
//   - missing-call-id: a callId present but not a string (null included);
//   - unknown-result-status: a Papercusp tool_result status present but not
//     a string.
//
// A type the dialect does not define is returned as an [*AppFrame] holding
// the frame; the host's registry decides whether it upgrades. What fits a
// type is [ParseChatEvent]'s, plus the Papercusp types ([DeltaFrame],
// [ToolCallFrame], [ToolResultFrame]); a member that may hold any JSON keeps
// an explicit null. The bytes are read as [ParseChatEvent] reads them, and
// the frame shares no memory with data. There is no size limit: bound the
// frame before calling. It never panics and is safe for concurrent use.
func DecodeLegacyChatFrame(data []byte, d Dialect) (Frame, error) {
	if err := d.check(); err != nil {
		return nil, err
	}
	if f, ok := decodeStrict(data, d); ok {
		return f, nil
	}
	return decodeGeneral(data, d)
}

// decodeGeneral is DecodeLegacyChatFrame for a valid dialect, on any bytes.
func decodeGeneral(data []byte, d Dialect) (Frame, error) {
	text := jsjson.DecodeUTF8(data)
	obj, spans, ok := jsjson.ParseObject(text)
	if !ok {
		return nil, refusal.New(refusal.CodeInvalidEvent, "", "a legacy frame is one JSON object")
	}
	if _, versioned := obj["schemaVersion"]; versioned {
		return nil, refusal.New(refusal.CodeUnsupportedVersion, "/schemaVersion", "a frame with schemaVersion is not legacy0: read it with ParseEnvelope")
	}
	typ, ok := obj["type"].(string)
	if !ok {
		return nil, refusal.New(refusal.CodeInvalidEvent, "/type", "a legacy frame has a string type")
	}
	spec, defined := vocabulary(d)[typ]
	if !defined {
		return &AppFrame{Type: typ, Raw: bytes.Clone(bytes.Trim(text, " \t\r\n"))}, nil
	}
	switch typ {
	case TypeDelta:
		if err := fit(obj, spec.members); err != nil {
			return nil, err
		}
		return spec.ofString(obj["text"].(string), rootUnknown(obj, spans, deltaNames)), nil
	case TypeToolCall:
		if err := fit(obj, spec.members); err != nil {
			return nil, err
		}
		callID, _ := obj["callId"].(string)
		return &ToolCallFrame{CallID: callID, Name: obj["name"].(string), Input: rawMember(obj, spans, "input"), Unknown: rootUnknown(obj, spans, toolCallNames)}, nil
	case TypeToolResult:
		if err := fit(obj, spec.members); err != nil {
			return nil, err
		}
		callID, _ := obj["callId"].(string)
		status, _ := obj["status"].(string)
		return &ToolResultFrame{CallID: callID, Status: chatprotocol.ToolResultStatus(status), Output: rawMember(obj, spans, "output"), Unknown: rootUnknown(obj, spans, toolResultNames)}, nil
	}
	ev, bad := parseKnown(typ, obj, spans)
	if ev == nil {
		// ParseChatEvent keeps a union frame whose members do not fit as an
		// app frame; the adapter refuses it instead, at the faulty member
		// (with its own code where a member has one).
		if err := fit(obj, spec.members); err != nil {
			return nil, err
		}
		return nil, refusal.New(refusal.CodeInvalidEvent, bad, "the "+typ+" frame's members do not fit its type")
	}
	return ev, nil
}

// rootUnknown returns the members of a frame, obj with its member texts
// spans, that known does not name (shape.unknown).
func rootUnknown(obj map[string]any, spans jsjson.Spans, known []string) []chatprotocol.Member {
	r := shape{m: obj, spans: spans, parsed: true}
	return r.unknown(known)
}

// rawMember returns a copy of the JSON text of member name, null
// included, or nil when the member is absent.
func rawMember(obj map[string]any, spans jsjson.Spans, name string) []byte {
	if _, ok := obj[name]; !ok {
		return nil
	}
	return bytes.Clone(spans.Get(name))
}

// kind is the JSON type a member must have.
type kind uint8

const (
	kindAny    kind = iota // any JSON value
	kindString             // a string
	kindNumber             // a finite number
	kindObject             // an object, whose members ParseChatEvent checks
)

// member is one member of a legacy frame type: its name, JSON type, whether
// it is required, and the code of a refusal about it.
type member struct {
	name     string
	kind     kind
	required bool
	code     refusal.Code
}

func req(name string, k kind) member {
	return member{name: name, kind: k, required: true, code: refusal.CodeInvalidEvent}
}

func opt(name string, k kind) member {
	return member{name: name, kind: k, code: refusal.CodeInvalidEvent}
}

// callID is the optional callId of a tool frame; a wrong type is refused as
// missing-call-id, as ParseEnvelope refuses it.
var callID = member{name: "callId", kind: kindString, code: refusal.CodeMissingCallID}

// frameSpec is a frame type of a dialect: its members, and for a type whose
// one member is a string (session, token, card_closed, error, navigate,
// delta) ofString, which makes its frame of that string and the frame's
// kept members; ofString is nil for the other types.
type frameSpec struct {
	members  []member
	ofString func(s string, unknown []chatprotocol.Member) Frame
}

// The vocabularies of the two dialects: each type the dialect defines with
// its members (docs/contract.md section 2; the package documentation for
// Papercusp). Members not listed are not checked; the frame keeps them
// in its Unknown field.
var (
	shared = map[string]frameSpec{
		TypeSession: {members: []member{req("sessionId", kindString)},
			ofString: func(s string, u []chatprotocol.Member) Frame { return &SessionFrame{SessionID: s, Unknown: u} }},
		TypeCard: {members: []member{req("card", kindObject)}},
		TypeCardClosed: {members: []member{req("correlationId", kindString)},
			ofString: func(s string, u []chatprotocol.Member) Frame { return &CardClosedFrame{CorrelationID: s, Unknown: u} }},
		TypeState: {members: []member{req("version", kindNumber), opt("snapshot", kindAny)}},
		TypeDone:  {members: []member{opt("usage", kindObject)}},
		TypeError: {members: []member{req("message", kindString)},
			ofString: func(s string, u []chatprotocol.Member) Frame { return &ErrorFrame{Message: s, Unknown: u} }},
		TypeNavigate: {members: []member{req("href", kindString)},
			ofString: func(s string, u []chatprotocol.Member) Frame { return &NavigateFrame{Href: s, Unknown: u} }},
	}
	scoutOnly = map[string]frameSpec{
		TypeToken: {members: []member{req("content", kindString)},
			ofString: func(s string, u []chatprotocol.Member) Frame { return &TokenFrame{Content: s, Unknown: u} }},
		TypeToolStart: {members: []member{req("tool", kindString), callID}},
	}
	papercuspOnly = map[string]frameSpec{
		TypeDelta: {members: []member{req("text", kindString)},
			ofString: func(s string, u []chatprotocol.Member) Frame { return &DeltaFrame{Text: s, Unknown: u} }},
		TypeToolCall: {members: []member{callID, req("name", kindString), opt("input", kindAny)}},
		TypeToolResult: {members: []member{callID, {name: "status", kind: kindString, code: refusal.CodeUnknownResultStatus},
			opt("output", kindAny)}},
	}
)

// vocabulary returns the types dialect d defines, each with its frameSpec.
func vocabulary(d Dialect) map[string]frameSpec {
	if d == Papercusp {
		return papercuspVocabulary
	}
	return scoutVocabulary
}

var (
	scoutVocabulary     = merge(shared, scoutOnly)
	papercuspVocabulary = merge(shared, papercuspOnly)
)

func merge(a, b map[string]frameSpec) map[string]frameSpec {
	out := make(map[string]frameSpec, len(a)+len(b))
	for _, m := range []map[string]frameSpec{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// fit refuses the first member of obj that is missing or null (when
// required) or present and of the wrong JSON type (a null included, unless
// it may hold any JSON), with that member's code and path.
func fit(obj map[string]any, specs []member) error {
	for _, m := range specs {
		v, present := obj[m.name]
		if v == nil && m.required {
			return refusal.New(m.code, "/"+m.name, "missing")
		}
		if !present {
			continue
		}
		if !m.kind.holds(v) {
			return refusal.New(m.code, "/"+m.name, "must be "+m.kind.String())
		}
	}
	return nil
}

func (k kind) holds(v any) bool {
	switch k {
	case kindString:
		_, ok := v.(string)
		return ok
	case kindNumber:
		f, ok := v.(float64)
		return ok && !math.IsInf(f, 0)
	case kindObject:
		_, ok := v.(map[string]any)
		return ok
	case kindAny:
		return true
	}
	return false
}

func (k kind) String() string {
	switch k {
	case kindString:
		return "a string"
	case kindNumber:
		return "a finite number"
	case kindObject:
		return "an object"
	}
	return "a JSON value"
}
