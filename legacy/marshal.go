package legacy

import (
	"bytes"
	"reflect"

	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// MarshalChatEvent writes f as its version-0 wire frame (docs/contract.md
// section 2): "type" first, then the members in the order the frame type's
// doc comment lists them (a card's in the order of Card's fields), every
// member the frame holds written, absent (nil) optional members omitted,
// strings as JSON.stringify writes them, numbers as JSON.stringify writes
// them. A frame [ParseChatEvent] returned is written back as the JSON it read
// (docs/contract.md section 2.4). An [*AppFrame] is written as its Raw bytes
// (or {"type":…} when Raw is empty). Each object's Unknown members, those
// a parsed frame had beyond its type, are written after its known members,
// in their order (docs/contract.md section 2.4).
//
// Errors: a [*refusal.Error] of code invalid-event when f is nil or a nil
// pointer; when an [*AppFrame]'s Raw, a [*StateFrame]'s Snapshot, a
// [*ToolCallFrame]'s Input or a [*ToolResultFrame]'s Output is not JSON, or a
// card's DataSchemaJSON is not the text of a JSON object (at that member's
// path); or when a number is NaN or infinite, which JSON cannot hold (at
// its path); or when a kept member's Value is not one JSON value, or its
// Name is that of a known member of its object or of an earlier kept
// member (at its path).
func MarshalChatEvent(f Frame) ([]byte, error) {
	if isNil(f) {
		return nil, noFrame()
	}
	if a, ok := f.(*AppFrame); ok {
		return marshalApp(a)
	}
	w := frameWriter{b: []byte(`{"type":`)}
	w.b = jsjson.AppendString(w.b, f.FrameType(), false)
	switch f := f.(type) {
	case *SessionFrame:
		w.str("sessionId", f.SessionID)
		w.unknown(f.Unknown, sessionNames)
	case *TokenFrame:
		w.str("content", f.Content)
		w.unknown(f.Unknown, tokenNames)
	case *ToolStartFrame:
		w.str("tool", f.Tool)
		w.optStr("callId", f.CallID)
		w.unknown(f.Unknown, toolStartNames)
	case *CardFrame:
		prev := w.begin("card", "/card")
		w.card(&f.Card)
		w.end(prev)
		w.unknown(f.Unknown, cardFrameNames)
	case *CardClosedFrame:
		w.str("correlationId", f.CorrelationID)
		w.unknown(f.Unknown, cardClosedNames)
	case *StateFrame:
		w.num("version", f.Version)
		w.optRaw("snapshot", f.Snapshot)
		w.unknown(f.Unknown, stateNames)
	case *DoneFrame:
		if u := f.Usage; u != nil {
			prev := w.begin("usage", "/usage")
			w.optNum("totalTokens", u.TotalTokens)
			w.optNum("costUsd", u.CostUSD)
			w.unknown(u.Unknown, usageNames)
			w.end(prev)
		}
		w.unknown(f.Unknown, doneNames)
	case *ErrorFrame:
		w.str("message", f.Message)
		w.unknown(f.Unknown, errorNames)
	case *NavigateFrame:
		w.str("href", f.Href)
		w.unknown(f.Unknown, navigateNames)
	case *DeltaFrame:
		w.str("text", f.Text)
		w.unknown(f.Unknown, deltaNames)
	case *ToolCallFrame:
		w.nonEmpty("callId", f.CallID)
		w.str("name", f.Name)
		w.optRaw("input", f.Input)
		w.unknown(f.Unknown, toolCallNames)
	case *ToolResultFrame:
		w.nonEmpty("callId", f.CallID)
		w.nonEmpty("status", string(f.Status))
		w.optRaw("output", f.Output)
		w.unknown(f.Unknown, toolResultNames)
	}
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '}'), nil
}

// marshalApp writes an app frame: its Raw bytes, or {"type":…} when it has
// none.
func marshalApp(a *AppFrame) ([]byte, error) {
	if len(a.Raw) == 0 {
		return append(jsjson.AppendString([]byte(`{"type":`), a.Type, false), '}'), nil
	}
	if !jsjson.Valid(a.Raw) {
		return nil, refusal.New(refusal.CodeInvalidEvent, "", "app frame raw is not JSON")
	}
	return bytes.Clone(a.Raw), nil
}

// isNil reports whether f is nil or a nil pointer (every Frame is a
// pointer), which no function of this package dereferences.
func isNil(f Frame) bool {
	return f == nil || reflect.ValueOf(f).IsNil()
}

// noFrame refuses a nil frame.
func noFrame() error {
	return refusal.New(refusal.CodeInvalidEvent, "", "no frame")
}

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *SessionFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *TokenFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *ToolStartFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *CardFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *CardClosedFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *StateFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *DoneFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *ErrorFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *NavigateFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *DeltaFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *ToolCallFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *ToolResultFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see [MarshalChatEvent].
func (f *AppFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }
