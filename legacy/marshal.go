package legacy

import (
	"bytes"
	"encoding/json"
	"reflect"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
	"github.com/Papercusp/chat-protocol-go/internal/wire"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// MarshalChatEvent writes f as its version-0 wire frame (docs/contract.md
// section 2): "type" first, then the members in the order the frame type's
// doc comment lists them, absent optional members omitted, strings as
// JSON.stringify writes them. An *AppFrame is written as its Raw bytes (or
// {"type":…} when Raw is empty). Members a parsed frame had beyond its type
// are not kept; keep the frame's bytes when they matter.
//
// Errors: a *refusal.Error of code invalid-event when f is nil or a nil
// pointer; when an *AppFrame's Raw, a *StateFrame's Snapshot, a
// *ToolCallFrame's Input or a *ToolResultFrame's Output is not JSON (at
// that member's path); when a card cannot be encoded (a bound that is NaN
// or infinite, at /card); or when an integer (a state's version, a usage's
// totalTokens, a card's createdAt or timeoutMs) is beyond 2^53-1, which
// ParseChatEvent would not read back. Strings of a card are written as
// valid UTF-8 (a lone surrogate becomes U+FFFD).
func MarshalChatEvent(f Frame) ([]byte, error) {
	if isNil(f) {
		return nil, noFrame()
	}
	if a, ok := f.(*AppFrame); ok {
		return marshalApp(a)
	}
	if err := checkSafeIntegers(f); err != nil {
		return nil, err
	}
	w := frameWriter{b: []byte(`{"type":`)}
	w.b = jsjson.AppendString(w.b, f.FrameType(), false)
	switch f := f.(type) {
	case *SessionFrame:
		w.str("sessionId", f.SessionID)
	case *TokenFrame:
		w.str("content", f.Content)
	case *ToolStartFrame:
		w.str("tool", f.Tool)
		w.optStr("callId", f.CallID)
	case *CardFrame:
		card, err := jsonv2.Marshal(f.Card, jsontext.AllowInvalidUTF8(true))
		if err != nil {
			return nil, wire.Wrap(refusal.CodeInvalidEvent, "/card", "card cannot be encoded", err)
		}
		w.name("card")
		w.b = append(w.b, card...)
	case *CardClosedFrame:
		w.str("correlationId", f.CorrelationID)
	case *StateFrame:
		w.name("version")
		w.b = jsjson.AppendNumber(w.b, float64(f.Version))
		w.optRaw("snapshot", f.Snapshot)
	case *DoneFrame:
		if f.Usage != nil {
			w.name("usage")
			w.usage(f.Usage)
		}
	case *ErrorFrame:
		w.str("message", f.Message)
	case *NavigateFrame:
		w.str("href", f.Href)
	case *DeltaFrame:
		w.str("text", f.Text)
	case *ToolCallFrame:
		w.optStr("callId", f.CallID)
		w.str("name", f.Name)
		w.optRaw("input", f.Input)
	case *ToolResultFrame:
		w.optStr("callId", f.CallID)
		w.optStr("status", string(f.Status))
		w.optRaw("output", f.Output)
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
		return nil, wire.New(refusal.CodeInvalidEvent, "", "app frame raw is not JSON")
	}
	return bytes.Clone(a.Raw), nil
}

// checkSafeIntegers refuses, with invalid-event at the member, an integer
// of a frame whose magnitude is beyond 2^53-1: a JavaScript number would
// round it, and ParseChatEvent does not read it back as the union type.
func checkSafeIntegers(f Frame) error {
	check := func(path string, n int64) error {
		if n > maxSafeInteger || n < -maxSafeInteger {
			return wire.New(refusal.CodeInvalidEvent, path, "an integer beyond 2^53-1 has no exact version-0 form")
		}
		return nil
	}
	switch f := f.(type) {
	case *StateFrame:
		return check("/version", f.Version)
	case *DoneFrame:
		if f.Usage != nil && f.Usage.TotalTokens != nil {
			return check("/usage/totalTokens", *f.Usage.TotalTokens)
		}
	case *CardFrame:
		if err := check("/card/createdAt", f.Card.CreatedAt); err != nil {
			return err
		}
		return check("/card/timeoutMs", f.Card.TimeoutMs)
	}
	return nil
}

// isNil reports whether f is nil or a nil pointer (every Frame is a
// pointer), which no function of this package dereferences.
func isNil(f Frame) bool {
	return f == nil || reflect.ValueOf(f).IsNil()
}

// noFrame refuses a nil frame.
func noFrame() error {
	return wire.New(refusal.CodeInvalidEvent, "", "no frame")
}

// frameWriter appends one frame object after its type, remembering the
// first error.
type frameWriter struct {
	b   []byte
	err error
}

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

// optRaw writes the JSON text raw, without the whitespace around it, or
// nothing when raw is nil; text that is not JSON is refused at /name.
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

// usage writes a done frame's usage object.
func (w *frameWriter) usage(u *Usage) {
	w.b = append(w.b, '{')
	if u.TotalTokens != nil {
		w.b = append(w.b, `"totalTokens":`...)
		w.b = jsjson.AppendNumber(w.b, float64(*u.TotalTokens))
	}
	if u.CostUSD != nil {
		if u.TotalTokens != nil {
			w.b = append(w.b, ',')
		}
		w.b = append(w.b, `"costUsd":`...)
		w.b = jsjson.AppendNumber(w.b, *u.CostUSD)
	}
	w.b = append(w.b, '}')
}

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *SessionFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *TokenFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *ToolStartFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *CardFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *CardClosedFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *StateFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *DoneFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *ErrorFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *NavigateFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *DeltaFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *ToolCallFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *ToolResultFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (f *AppFrame) MarshalJSON() ([]byte, error) { return MarshalChatEvent(f) }
