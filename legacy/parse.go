package legacy

import (
	"bytes"
	"math"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/blocks"
	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
)

// maxSafeInteger is 2^53 - 1, the largest integer a JSON number carries
// exactly between JavaScript peers.
const maxSafeInteger = 1<<53 - 1

// ParseChatEvent reads one version-0 frame (the JSON text of an SSE data
// field) tolerantly, as the TypeScript reference's parseChatEvent does
// (docs/contract.md section 2): it never fails and never panics.
//
// It returns nil when data is not a JSON object with a string "type" member.
// Otherwise:
//
//   - A frame of a union type whose members fit that type returns the typed
//     frame (*TokenFrame …).
//   - A product's own type (Scout's products, cart_mutate …) returns a
//     *AppFrame holding the frame; it is never dropped.
//   - A frame of a union type whose members do not fit also returns a
//     *AppFrame with that type and the frame, so nothing is dropped and
//     nothing is invented: no zero value stands in for a wrongly typed
//     member. Its FrameType still names the union type, so channel
//     decisions (IsReplayableFrame …) stay right.
//
// Members fit when each member of section 2 has its JSON type where present
// (a null counts as absent) and the identifying members are present:
// session needs a string sessionId, token a string content, tool_start a
// string tool (and, optionally, a string callId), card an object card with
// string correlationId and prompt, card_closed a string correlationId,
// error a string message and navigate a string href. Integers (version,
// createdAt, timeoutMs, totalTokens) must be whole numbers of magnitude at
// most 2^53-1; other numbers must be finite. A card's other members are
// checked for type only (chatprotocol.ValidateOpenCardSnapshot checks the card rules);
// its report is read with blocks.ParseReportBlock and must give a block; a
// dataSchemaJson object is kept as its JSON text. Members the union does not
// define are ignored.
//
// The bytes are read as a browser reads them (see package internal/jsjson,
// as in package blocks): invalid UTF-8 as U+FFFD, duplicate member names
// last-one-wins, member names case-sensitive ("TYPE" is not "type"), 1e400
// as Infinity, no depth limit. Returned frames share no memory with data.
// There is no size limit: bound the frame before calling.
func ParseChatEvent(data []byte) Frame {
	data = jsjson.DecodeUTF8(data)
	obj, spans, ok := jsjson.ParseObject(data)
	if !ok {
		return nil
	}
	typ, ok := obj["type"].(string)
	if !ok {
		return nil
	}
	if f := parseKnown(typ, obj, spans); f != nil {
		return f
	}
	return &AppFrame{Type: typ, Raw: bytes.Clone(bytes.Trim(data, " \t\r\n"))}
}

// parseKnown returns the typed frame of a union frame whose members fit,
// and nil for anything else.
func parseKnown(typ string, obj map[string]any, spans jsjson.Spans) Frame {
	switch typ {
	case TypeSession:
		if s, ok := reqString(obj, "sessionId"); ok {
			return &SessionFrame{SessionID: s}
		}
	case TypeToken:
		if s, ok := reqString(obj, "content"); ok {
			return &TokenFrame{Content: s}
		}
	case TypeToolStart:
		tool, ok1 := reqString(obj, "tool")
		callID, ok2 := optString(obj, "callId")
		if ok1 && ok2 {
			return &ToolStartFrame{Tool: tool, CallID: callID}
		}
	case TypeCard:
		if m, ok := obj["card"].(map[string]any); ok {
			if card, ok := decodeCard(m, spans.Get("card")); ok {
				return &CardFrame{Card: card}
			}
		}
	case TypeCardClosed:
		if s, ok := reqString(obj, "correlationId"); ok {
			return &CardClosedFrame{CorrelationID: s}
		}
	case TypeState:
		version, ok := optInt(obj, "version")
		if !ok {
			return nil
		}
		f := &StateFrame{Version: version}
		if obj["snapshot"] != nil {
			f.Snapshot = bytes.Clone(spans.Get("snapshot"))
		}
		return f
	case TypeDone:
		if obj["usage"] == nil {
			return &DoneFrame{}
		}
		if usage, ok := decodeUsage(obj["usage"]); ok {
			return &DoneFrame{Usage: usage}
		}
	case TypeError:
		if s, ok := reqString(obj, "message"); ok {
			return &ErrorFrame{Message: s}
		}
	case TypeNavigate:
		if s, ok := reqString(obj, "href"); ok {
			return &NavigateFrame{Href: s}
		}
	}
	return nil
}

func decodeUsage(v any) (*Usage, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	u := &Usage{}
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
		u.CostUSD = &f
	}
	return u, true
}

// decodeCard reads a card member, parsed as m from its JSON text span,
// into a chatprotocol.OpenCardSnapshot. The text is parsed again only for a
// dataSchemaJson object, kept as its text.
func decodeCard(m map[string]any, span []byte) (chatprotocol.OpenCardSnapshot, bool) {
	var c chatprotocol.OpenCardSnapshot
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
		var pres *chatprotocol.CardPresentation
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

func decodePresentation(v any) (*chatprotocol.CardPresentation, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	p := &chatprotocol.CardPresentation{}
	var kind string
	ok = setOpt(&kind, optString, m, "kind", true)
	p.Kind = chatprotocol.CardKind(kind)
	ok = setOpt(&p.Placeholder, optString, m, "placeholder", ok)
	ok = setOpt(&p.Multiline, optBool, m, "multiline", ok)
	ok = setOpt(&p.Step, optFloat, m, "step", ok)
	ok = setOpt(&p.VoiceAnswerable, optBool, m, "voiceAnswerable", ok)
	for _, name := range []string{"min", "max"} {
		var b *chatprotocol.CardBound
		switch x := m[name].(type) {
		case nil:
			continue
		case string:
			b = &chatprotocol.CardBound{Date: x}
			ok = ok && x != ""
		case float64:
			b = &chatprotocol.CardBound{Number: x}
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
		p.Options = make([]chatprotocol.CardOption, 0, len(opts))
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

func decodeOption(v any) (chatprotocol.CardOption, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return chatprotocol.CardOption{}, false
	}
	var o chatprotocol.CardOption
	var style string
	ok = setOpt(&o.ID, optString, m, "id", true)
	ok = setOpt(&o.Label, optString, m, "label", ok)
	ok = setOpt(&o.Description, optString, m, "description", ok)
	ok = setOpt(&o.Hint, optString, m, "hint", ok)
	ok = setOpt(&style, optString, m, "style", ok)
	o.Style = chatprotocol.CardOptionStyle(style)
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
