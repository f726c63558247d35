package legacy

import (
	"bytes"

	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
)

// maxSafeInteger is 2^53 - 1, the largest integer a JSON number carries
// exactly between JavaScript peers.
const maxSafeInteger = 1<<53 - 1

// ParseChatEvent reads one version-0 frame (the JSON text of an SSE data
// field) tolerantly, as the TypeScript reference's parseChatEvent does, by
// the rules of docs/contract.md section 2.4: it never fails and never
// panics.
//
// It returns nil when data is not a JSON object with a string "type"
// member. A frame of a union type that the reference's type accepts
// returns the typed frame ([*TokenFrame] …), holding exactly what the frame
// has, its unknown members included: [MarshalChatEvent] writes it back as
// the same JSON. A product's own type, and a union frame its type does not
// accept, return an [*AppFrame] holding the frame, never repaired; its
// FrameType still names the type, so channel decisions
// ([IsReplayableFrame] …) stay right. Whether a typed card keeps the card
// rules is [chatprotocol.ValidateOpenCardSnapshot]'s question, after
// [Card.ToOpenCardSnapshot].
//
// The bytes are read as a browser's JSON.parse reads them: invalid UTF-8
// as U+FFFD, duplicate names last-one-wins, names case-sensitive, 1e400 as
// Infinity, no depth limit. Returned frames share no memory with data.
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
	if f, _ := parseKnown(typ, obj, spans); f != nil {
		return f
	}
	return &AppFrame{Type: typ, Raw: bytes.Clone(bytes.Trim(data, " \t\r\n"))}
}

// parseKnown returns the typed frame of a union frame its type accepts.
// For any other frame it returns nil and, for a union frame, the JSON
// pointer of the first member that does not fit ("" for other types).
func parseKnown(typ string, obj map[string]any, spans jsjson.Spans) (Frame, string) {
	r := shape{m: obj, spans: spans, parsed: true}
	var f Frame
	switch typ {
	case TypeSession:
		f = &SessionFrame{SessionID: r.str("sessionId"), Unknown: r.unknown(sessionNames)}
	case TypeToken:
		f = &TokenFrame{Content: r.str("content"), Unknown: r.unknown(tokenNames)}
	case TypeToolStart:
		f = &ToolStartFrame{Tool: r.str("tool"), CallID: r.optStr("callId"), Unknown: r.unknown(toolStartNames)}
	case TypeCard:
		card := &CardFrame{}
		if m, ok := r.object("card"); ok {
			c := shape{m: m, at: "/card", text: spans.Get("card")}
			card.Card = readCard(&c)
			if c.extra && c.bad == "" {
				// Members to keep below the card: read it again, every
				// nested object with its text.
				k := shape{m: m, at: "/card", text: c.text, spans: c.spans, parsed: c.parsed, kept: true}
				card.Card = readCard(&k)
			}
			r.bad = c.bad
		}
		card.Unknown = r.unknown(cardFrameNames)
		f = card
	case TypeCardClosed:
		f = &CardClosedFrame{CorrelationID: r.str("correlationId"), Unknown: r.unknown(cardClosedNames)}
	case TypeState:
		state := &StateFrame{Version: r.num("version"), Unknown: r.unknown(stateNames)}
		if _, ok := obj["snapshot"]; ok {
			state.Snapshot = bytes.Clone(spans.Get("snapshot"))
		}
		f = state
	case TypeDone:
		done := &DoneFrame{Unknown: r.unknown(doneNames)}
		if m, ok := r.optObject("usage"); ok {
			u := shape{m: m, at: "/usage", text: spans.Get("usage")}
			done.Usage = &Usage{TotalTokens: u.optNum("totalTokens"), CostUSD: u.optNum("costUsd"), Unknown: u.unknown(usageNames)}
			r.bad = u.bad
		}
		f = done
	case TypeError:
		f = &ErrorFrame{Message: r.str("message"), Unknown: r.unknown(errorNames)}
	case TypeNavigate:
		f = &NavigateFrame{Href: r.str("href"), Unknown: r.unknown(navigateNames)}
	default:
		return nil, ""
	}
	if r.bad != "" {
		return nil, r.bad
	}
	return f, ""
}
