package chatprotocol

import (
	"bytes"
	"math"
	"reflect"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/Papercusp/chat-protocol-go/blocks"
	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
	"github.com/Papercusp/chat-protocol-go/internal/wire"
)

// maxSafeInteger is 2^53 - 1, the largest integer a JSON number carries
// exactly between JavaScript peers.
const maxSafeInteger = 1<<53 - 1

// ParseChatEvent reads one version-0 frame (the JSON text of an SSE data
// field) tolerantly, as the TypeScript reference's parseChatEvent does
// (contract-v1.md section 2): it never fails and never panics.
//
// It returns nil when data is not a JSON object with a string "type" member.
// Otherwise:
//
//   - A frame of a union type whose members fit that type returns the typed
//     event (*ChatToken …).
//   - A product's own type (Scout's products, cart_mutate …) returns a
//     *ChatAppEvent holding the frame; it is never dropped.
//   - A frame of a union type whose members do not fit also returns a
//     *ChatAppEvent with that type and the frame, so nothing is dropped and
//     nothing is invented: no zero value stands in for a wrongly typed
//     member. Its ChatEventType still names the union type, so channel
//     decisions (IsReplayable …) stay right.
//
// Members fit when each member of section 2 has its JSON type where present
// (a null counts as absent) and the identifying members are present:
// session needs a string sessionId, token a string content, tool_start a
// string tool (and, optionally, a string callId), card an object card with
// string correlationId and prompt, card_closed a string correlationId,
// error a string message and navigate a string href. Integers (version,
// createdAt, timeoutMs, totalTokens) must be whole numbers of magnitude at
// most 2^53-1; other numbers must be finite. A card's other members are
// checked for type only (ValidateOpenCardSnapshot checks the card rules);
// its report is read with blocks.ParseReportBlock and must give a block; a
// dataSchemaJson object is kept as its JSON text. Members the union does not
// define are ignored.
//
// The bytes are read as a browser reads them (see package internal/jsjson,
// as in package blocks): invalid UTF-8 as U+FFFD, duplicate member names
// last-one-wins, member names case-sensitive ("TYPE" is not "type"), 1e400
// as Infinity, no depth limit. Returned events share no memory with data.
// There is no size limit: bound the frame before calling.
func ParseChatEvent(data []byte) ChatEvent {
	data = jsjson.DecodeUTF8(data)
	obj, spans, ok := jsjson.ParseObject(data)
	if !ok {
		return nil
	}
	typ, ok := obj["type"].(string)
	if !ok {
		return nil
	}
	if ev := parseKnown(typ, obj, spans); ev != nil {
		return ev
	}
	return &ChatAppEvent{Type: typ, Raw: bytes.Clone(bytes.Trim(data, " \t\r\n"))}
}

// parseKnown returns the typed event of a union frame whose members fit,
// and nil for anything else.
func parseKnown(typ string, obj map[string]any, spans jsjson.Spans) ChatEvent {
	switch typ {
	case ChatEventSession:
		if s, ok := reqString(obj, "sessionId"); ok {
			return &ChatSession{SessionID: s}
		}
	case ChatEventToken:
		if s, ok := reqString(obj, "content"); ok {
			return &ChatToken{Content: s}
		}
	case ChatEventToolStart:
		tool, ok1 := reqString(obj, "tool")
		callID, ok2 := optString(obj, "callId")
		if ok1 && ok2 {
			return &ChatToolStart{Tool: tool, CallID: callID}
		}
	case ChatEventCard:
		if m, ok := obj["card"].(map[string]any); ok {
			if card, ok := decodeCard(m, spans.Get("card")); ok {
				return &ChatCard{Card: card}
			}
		}
	case ChatEventCardClosed:
		if s, ok := reqString(obj, "correlationId"); ok {
			return &ChatCardClosed{CorrelationID: s}
		}
	case ChatEventState:
		version, ok := optInt(obj, "version")
		if !ok {
			return nil
		}
		ev := &ChatStateSnapshot{Version: version}
		if obj["snapshot"] != nil {
			ev.Snapshot = bytes.Clone(spans.Get("snapshot"))
		}
		return ev
	case ChatEventDone:
		if obj["usage"] == nil {
			return &ChatDone{}
		}
		if usage, ok := decodeUsage(obj["usage"]); ok {
			return &ChatDone{Usage: usage}
		}
	case ChatEventError:
		if s, ok := reqString(obj, "message"); ok {
			return &ChatError{Message: s}
		}
	case ChatEventNavigate:
		if s, ok := reqString(obj, "href"); ok {
			return &ChatNavigate{Href: s}
		}
	}
	return nil
}

func decodeUsage(v any) (*ChatUsage, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	u := &ChatUsage{}
	if m["totalTokens"] != nil {
		n, ok := optInt(m, "totalTokens")
		if !ok {
			return nil, false
		}
		u.TotalTokens = &n
	}
	if m["costUsd"] != nil {
		f, ok := optFloat(m, "costUsd")
		if !ok {
			return nil, false
		}
		u.CostUsd = &f
	}
	return u, true
}

// decodeCard reads a card member, parsed as m from its JSON text span,
// into an OpenCardSnapshot. The text is parsed again only for a
// dataSchemaJson object, kept as its text.
func decodeCard(m map[string]any, span []byte) (OpenCardSnapshot, bool) {
	var c OpenCardSnapshot
	var ok bool
	var okID, okPrompt bool
	c.CorrelationID, okID = reqString(m, "correlationId")
	c.Prompt, okPrompt = reqString(m, "prompt")
	ok = okID && okPrompt
	ok = setOpt(&c.CreatedAt, optInt, m, "createdAt", ok)
	ok = setOpt(&c.FallbackText, optString, m, "fallbackText", ok)
	ok = setOpt(&c.AllowDecline, optBool, m, "allowDecline", ok)
	ok = setOpt(&c.TimeoutMs, optInt, m, "timeoutMs", ok)
	if p := m["presentation"]; p != nil && ok {
		var pres *CardPresentation
		pres, ok = decodePresentation(p)
		c.Presentation = pres
	}
	if r := m["report"]; r != nil && ok {
		var report blocks.ReportBlock
		report, ok = blocks.ParseReportBlock(r)
		c.Report = &report
	}
	switch s := m["dataSchemaJson"].(type) {
	case nil:
	case string:
		c.DataSchemaJSON = s
	case map[string]any:
		_, spans, _ := jsjson.ParseObject(span)
		c.DataSchemaJSON = string(spans.Get("dataSchemaJson"))
	default:
		ok = false
	}
	return c, ok
}

func decodePresentation(v any) (*CardPresentation, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	p := &CardPresentation{}
	var kind string
	ok = setOpt(&kind, optString, m, "kind", true)
	p.Kind = CardKind(kind)
	ok = setOpt(&p.Placeholder, optString, m, "placeholder", ok)
	ok = setOpt(&p.Multiline, optBool, m, "multiline", ok)
	ok = setOpt(&p.Step, optFloat, m, "step", ok)
	ok = setOpt(&p.VoiceAnswerable, optBool, m, "voiceAnswerable", ok)
	for _, name := range []string{"min", "max"} {
		var b *CardBound
		switch x := m[name].(type) {
		case nil:
			continue
		case string:
			b = &CardBound{Date: x}
			ok = ok && x != ""
		case float64:
			b = &CardBound{Number: x}
			ok = ok && !math.IsInf(x, 0)
		default:
			ok = false
		}
		if name == "min" {
			p.Min = b
		} else {
			p.Max = b
		}
	}
	switch opts := m["options"].(type) {
	case nil:
	case []any:
		p.Options = make([]CardOption, 0, len(opts))
		for _, o := range opts {
			opt, optOK := decodeOption(o)
			ok = ok && optOK
			p.Options = append(p.Options, opt)
		}
	default:
		ok = false
	}
	return p, ok
}

func decodeOption(v any) (CardOption, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return CardOption{}, false
	}
	var o CardOption
	var style string
	ok = setOpt(&o.ID, optString, m, "id", true)
	ok = setOpt(&o.Label, optString, m, "label", ok)
	ok = setOpt(&o.Description, optString, m, "description", ok)
	ok = setOpt(&o.Hint, optString, m, "hint", ok)
	ok = setOpt(&style, optString, m, "style", ok)
	o.Style = CardOptionStyle(style)
	return o, ok
}

// setOpt reads the optional member name of m with read into *dst and
// returns ok && the member fits.
func setOpt[T any](dst *T, read func(map[string]any, string) (T, bool), m map[string]any, name string, ok bool) bool {
	v, fits := read(m, name)
	*dst = v
	return ok && fits
}

// reqString returns a member that must be a string.
func reqString(m map[string]any, name string) (string, bool) {
	s, ok := m[name].(string)
	return s, ok
}

// optString returns a member that, when present and not null, must be a
// string; "" when absent.
func optString(m map[string]any, name string) (string, bool) {
	switch v := m[name].(type) {
	case nil:
		return "", true
	case string:
		return v, true
	}
	return "", false
}

func optBool(m map[string]any, name string) (bool, bool) {
	switch v := m[name].(type) {
	case nil:
		return false, true
	case bool:
		return v, true
	}
	return false, false
}

func optFloat(m map[string]any, name string) (float64, bool) {
	switch v := m[name].(type) {
	case nil:
		return 0, true
	case float64:
		return v, !math.IsInf(v, 0)
	}
	return 0, false
}

// optInt returns a member that, when present and not null, must be a whole
// number of magnitude at most 2^53-1; 0 when absent.
func optInt(m map[string]any, name string) (int64, bool) {
	switch v := m[name].(type) {
	case nil:
		return 0, true
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > maxSafeInteger {
			return 0, false
		}
		return int64(v), true
	}
	return 0, false
}

// MarshalChatEvent writes ev as its version-0 wire frame: "type" first, then
// the members of section 2 in the order the union lists them, optional
// members omitted when absent, strings as JSON.stringify writes them. A
// *ChatAppEvent is written as its Raw bytes (or {"type":…} when Raw is
// empty). Members a parsed frame had beyond the union are not kept; keep the
// frame's bytes when they matter.
//
// Errors: an *Error of code invalid-event when ev is nil or a nil pointer,
// when a *ChatAppEvent's Raw or a *ChatStateSnapshot's Snapshot is not JSON,
// when a card cannot be encoded (a bound that is NaN or infinite), or when an
// integer (a state's version, a usage's totalTokens, a card's createdAt or
// timeoutMs) is beyond 2^53-1, which ParseChatEvent would not read back.
// Strings of a card are written as valid UTF-8 (a lone surrogate becomes
// U+FFFD).
func MarshalChatEvent(ev ChatEvent) ([]byte, error) {
	b := []byte(`{"type":`)
	str := func(name, value string) {
		b = append(b, ',', '"')
		b = append(b, name...)
		b = append(b, '"', ':')
		b = jsjson.AppendString(b, value, false)
	}
	if ev == nil || reflect.ValueOf(ev).IsNil() { // every ChatEvent is a pointer
		return nil, wire.New(wire.CodeInvalidEvent, "", "nil event")
	}
	switch e := ev.(type) {
	case *ChatAppEvent:
		if len(e.Raw) == 0 {
			return append(jsjson.AppendString(b, e.Type, false), '}'), nil
		}
		if !jsjson.Valid(e.Raw) {
			return nil, wire.New(wire.CodeInvalidEvent, "", "app event raw is not JSON")
		}
		return bytes.Clone(e.Raw), nil
	}
	if err := checkSafeIntegers(ev); err != nil {
		return nil, err
	}
	b = jsjson.AppendString(b, ev.ChatEventType(), false)
	switch e := ev.(type) {
	case *ChatSession:
		str("sessionId", e.SessionID)
	case *ChatToken:
		str("content", e.Content)
	case *ChatToolStart:
		str("tool", e.Tool)
		if e.CallID != "" {
			str("callId", e.CallID)
		}
	case *ChatCard:
		card, err := jsonv2.Marshal(e.Card, jsontext.AllowInvalidUTF8(true))
		if err != nil {
			return nil, wire.Wrap(wire.CodeInvalidEvent, "/card", "card cannot be encoded", err)
		}
		b = append(b, `,"card":`...)
		b = append(b, card...)
	case *ChatCardClosed:
		str("correlationId", e.CorrelationID)
	case *ChatStateSnapshot:
		b = append(b, `,"version":`...)
		b = jsjson.AppendNumber(b, float64(e.Version))
		if e.Snapshot != nil {
			if !jsjson.Valid(e.Snapshot) {
				return nil, wire.New(wire.CodeInvalidEvent, "/snapshot", "snapshot is not JSON")
			}
			b = append(b, `,"snapshot":`...)
			b = append(b, bytes.Trim(e.Snapshot, " \t\r\n")...)
		}
	case *ChatDone:
		if u := e.Usage; u != nil {
			b = append(b, `,"usage":{`...)
			if u.TotalTokens != nil {
				b = append(b, `"totalTokens":`...)
				b = jsjson.AppendNumber(b, float64(*u.TotalTokens))
			}
			if u.CostUsd != nil {
				if u.TotalTokens != nil {
					b = append(b, ',')
				}
				b = append(b, `"costUsd":`...)
				b = jsjson.AppendNumber(b, *u.CostUsd)
			}
			b = append(b, '}')
		}
	case *ChatError:
		str("message", e.Message)
	case *ChatNavigate:
		str("href", e.Href)
	}
	return append(b, '}'), nil
}

// checkSafeIntegers refuses, with invalid-event at the member, an integer
// of a version-0 frame whose magnitude is beyond 2^53-1: a JavaScript
// number would round it, and ParseChatEvent does not read it back as the
// union type (section 2).
func checkSafeIntegers(ev ChatEvent) error {
	check := func(path string, n int64) error {
		if n > maxSafeInteger || n < -maxSafeInteger {
			return wire.New(wire.CodeInvalidEvent, path, "an integer beyond 2^53-1 has no exact version-0 form")
		}
		return nil
	}
	switch e := ev.(type) {
	case *ChatStateSnapshot:
		return check("/version", e.Version)
	case *ChatDone:
		if e.Usage != nil && e.Usage.TotalTokens != nil {
			return check("/usage/totalTokens", *e.Usage.TotalTokens)
		}
	case *ChatCard:
		if err := check("/card/createdAt", e.Card.CreatedAt); err != nil {
			return err
		}
		return check("/card/timeoutMs", e.Card.TimeoutMs)
	}
	return nil
}

// MarshalJSON writes the frame; see MarshalChatEvent.
func (e *ChatSession) MarshalJSON() ([]byte, error) { return MarshalChatEvent(e) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (e *ChatToken) MarshalJSON() ([]byte, error) { return MarshalChatEvent(e) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (e *ChatToolStart) MarshalJSON() ([]byte, error) { return MarshalChatEvent(e) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (e *ChatCard) MarshalJSON() ([]byte, error) { return MarshalChatEvent(e) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (e *ChatCardClosed) MarshalJSON() ([]byte, error) { return MarshalChatEvent(e) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (e *ChatStateSnapshot) MarshalJSON() ([]byte, error) { return MarshalChatEvent(e) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (e *ChatDone) MarshalJSON() ([]byte, error) { return MarshalChatEvent(e) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (e *ChatError) MarshalJSON() ([]byte, error) { return MarshalChatEvent(e) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (e *ChatNavigate) MarshalJSON() ([]byte, error) { return MarshalChatEvent(e) }

// MarshalJSON writes the frame; see MarshalChatEvent.
func (e *ChatAppEvent) MarshalJSON() ([]byte, error) { return MarshalChatEvent(e) }
