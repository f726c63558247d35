package legacy

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
	"github.com/Papercusp/chat-protocol-go/internal/wire"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Dialect is the vocabulary of a legacy stream, chosen by the host: the
// adapters never guess it from the bytes (contract-v1.md section 9, seed
// 000: "Scout's measured token/content and tool_start/tool vocabulary maps
// to delta/text and tool_call/name; Papercusp retains its existing
// vocabulary"). The zero Dialect is not a dialect: every function refuses
// it, so a host cannot read legacy frames without saying which.
type Dialect uint8

// The dialects. See the package documentation for the exact vocabulary of
// each and for what this module assumes about the Papercusp one.
const (
	// Scout is the shipped version-0 union of contract-v1.md section 2:
	// session, token{content}, tool_start{tool, callId?}, card,
	// card_closed, state, done{usage?}, error{message}, navigate.
	Scout Dialect = iota + 1
	// Papercusp keeps its own vocabulary: delta{text},
	// tool_call{callId?, name, input?} and tool_result{callId?, status,
	// output?} in place of token and tool_start, and the other types of
	// section 2 unchanged.
	Papercusp
)

// String returns "scout", "papercusp", or "invalid".
func (d Dialect) String() string {
	switch d {
	case Scout:
		return "scout"
	case Papercusp:
		return "papercusp"
	}
	return "invalid"
}

// ParseDialect returns the dialect named s ("scout" or "papercusp", as
// String writes them); ok is false for any other name.
func ParseDialect(s string) (d Dialect, ok bool) {
	for _, d := range []Dialect{Scout, Papercusp} {
		if d.String() == s {
			return d, true
		}
	}
	return 0, false
}

// valid reports whether d is one of the dialects.
func (d Dialect) valid() bool { return d == Scout || d == Papercusp }

// check refuses an invalid dialect with unsupported-version: the host asked
// for a legacy wire variant this module does not speak.
func (d Dialect) check() error {
	if !d.valid() {
		return wire.New(refusal.CodeUnsupportedVersion, "", "legacy dialect "+strconv.Itoa(int(d))+" is neither Scout nor Papercusp")
	}
	return nil
}

// Frame is one decoded legacy frame. In the Scout dialect it is one of the
// version-0 union's types of the root package (*chatprotocol.ChatSession,
// *ChatToken, *ChatToolStart, *ChatCard, *ChatCardClosed,
// *ChatStateSnapshot, *ChatDone, *ChatError, *ChatNavigate) or a
// *chatprotocol.ChatAppEvent for a product's own type. In the Papercusp
// dialect it is one of the same types except *ChatToken and *ChatToolStart,
// whose places are taken by *Delta, *ToolCall and *ToolResult.
//
// ChatEventType returns the frame's "type" member as it is on the wire.
// The functions of this package refuse, with invalid-event, any other type
// that implements the method.
type Frame interface {
	ChatEventType() string
}

// The type names of the Papercusp dialect that the Scout union does not
// have.
const (
	TypeDelta      = "delta"
	TypeToolCall   = "tool_call"
	TypeToolResult = "tool_result"
)

// Delta is a text fragment of the Papercusp dialect, appended by
// consumers: {"type":"delta","text":…}. It upgrades to a version-1 delta.
type Delta struct {
	Text string
}

// ToolCall says the model invoked a tool, in the Papercusp dialect:
// {"type":"tool_call","callId":…,"name":…,"input":…}. CallID is "" when the
// frame carries none (the host's mapping then supplies it on upgrade);
// Input is the JSON text of the optional input (null included), nil when
// absent.
type ToolCall struct {
	CallID string
	Name   string
	Input  json.RawMessage
}

// ToolResult closes a tool call, in the Papercusp dialect:
// {"type":"tool_result","callId":…,"status":…,"output":…}. CallID is "" when
// the frame carries none. Status is "" when the frame has none; an absent
// or unknown status is kept here and refused on upgrade
// (unknown-result-status), never guessed. Output is the JSON text of the
// optional output (null included), nil when absent.
type ToolResult struct {
	CallID string
	Status chatprotocol.ToolResultStatus
	Output json.RawMessage
}

// ChatEventType returns "delta".
func (*Delta) ChatEventType() string { return TypeDelta }

// ChatEventType returns "tool_call".
func (*ToolCall) ChatEventType() string { return TypeToolCall }

// ChatEventType returns "tool_result".
func (*ToolResult) ChatEventType() string { return TypeToolResult }

// MarshalJSON writes the frame; see MarshalFrame.
func (f *Delta) MarshalJSON() ([]byte, error) { return MarshalFrame(f) }

// MarshalJSON writes the frame; see MarshalFrame.
func (f *ToolCall) MarshalJSON() ([]byte, error) { return MarshalFrame(f) }

// MarshalJSON writes the frame; see MarshalFrame.
func (f *ToolResult) MarshalJSON() ([]byte, error) { return MarshalFrame(f) }

// MarshalFrame writes f as its legacy wire frame: the root package's types
// as chatprotocol.MarshalChatEvent writes them, and the Papercusp types
// with "type" first, then their members in the order of their doc comment,
// absent optional members omitted, strings as JSON.stringify writes them.
//
// Errors: an *Error of code invalid-event when f is nil or of a type this
// package does not know, when Input or Output is not JSON, or whatever
// MarshalChatEvent refuses.
func MarshalFrame(f Frame) ([]byte, error) {
	if isNil(f) {
		return nil, notAFrame(nil)
	}
	w := frameWriter{b: []byte(`{"type":`)}
	switch f := f.(type) {
	case chatprotocol.ChatEvent:
		return chatprotocol.MarshalChatEvent(f)
	case *Delta:
		w.open(TypeDelta)
		w.str("text", f.Text)
	case *ToolCall:
		w.open(TypeToolCall)
		w.optStr("callId", f.CallID)
		w.str("name", f.Name)
		w.optRaw("input", f.Input)
	case *ToolResult:
		w.open(TypeToolResult)
		w.optStr("callId", f.CallID)
		w.optStr("status", string(f.Status))
		w.optRaw("output", f.Output)
	default:
		return nil, notAFrame(f)
	}
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '}'), nil
}

// isNil reports whether f is nil or a nil pointer, which no function of
// this package dereferences.
func isNil(f Frame) bool {
	if f == nil {
		return true
	}
	v := reflect.ValueOf(f)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// notAFrame refuses a value that is not one of the legacy frame types.
func notAFrame(f Frame) error {
	if f == nil {
		return wire.New(refusal.CodeInvalidEvent, "", "no frame")
	}
	return wire.New(refusal.CodeInvalidEvent, "", "a "+f.ChatEventType()+" value of a type that is not a legacy frame")
}

// frameWriter appends one legacy frame object, remembering the first error.
type frameWriter struct {
	b   []byte
	err error
}

func (w *frameWriter) open(typ string) { w.b = jsjson.AppendString(w.b, typ, false) }

func (w *frameWriter) name(name string) {
	w.b = append(w.b, ',', '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
}

func (w *frameWriter) str(name, s string) {
	w.name(name)
	w.b = jsjson.AppendString(w.b, s, false)
}

func (w *frameWriter) optStr(name, s string) {
	if s != "" {
		w.str(name, s)
	}
}

func (w *frameWriter) optRaw(name string, raw json.RawMessage) {
	if raw == nil {
		return
	}
	if !jsjson.Valid(raw) {
		if w.err == nil {
			w.err = wire.New(refusal.CodeInvalidEvent, "/"+name, "not JSON")
		}
		return
	}
	w.name(name)
	w.b = append(w.b, bytes.Trim(raw, " \t\r\n")...)
}
