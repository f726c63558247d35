package legacy

import (
	"encoding/json"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

// The frames of the section-2 union are the TypeScript reference's ChatEvent
// types exactly (docs/contract.md section 2.4): a required member is a
// value, an optional one a pointer (or a nil slice or raw text) that is nil
// when absent, and numbers are JSON numbers (float64), so that
// MarshalChatEvent writes back, as JSON, the frame ParseChatEvent read.
//
// Every object of a typed frame (the frame itself, a card, its
// presentation, each option, its report, each plan and item, a done
// frame's usage) also has an Unknown field: the members the type does not
// name, as a JavaScript client's JSON.parse keeps them and JSON.stringify
// writes them back. Each is a chatprotocol.Member, its Name unescaped and
// its Value the member's JSON text as read, in the order the names first
// appear; a name given twice keeps its last value, as JSON.parse does.
// Unknown is nil when there are none. MarshalChatEvent writes them after
// the object's known members (docs/contract.md section 2.4).

// Frame is one frame of the version-0 union (docs/contract.md section 2): a
// [*SessionFrame], [*TokenFrame], [*ToolStartFrame], [*CardFrame],
// [*CardClosedFrame], [*StateFrame], [*DoneFrame], [*ErrorFrame],
// [*NavigateFrame], the Papercusp dialect's [*DeltaFrame], [*ToolCallFrame] and
// [*ToolResultFrame], or an [*AppFrame] for a product's own type. The union is
// sealed: only this package's types implement it. Read one with
// [ParseChatEvent] (tolerant) or [DecodeLegacyChatFrame] (for upgrading); write
// one with [MarshalChatEvent].
type Frame interface {
	// FrameType returns the frame's "type" member as it is on the wire,
	// such as "token".
	FrameType() string
	isFrame()
}

// The type names of the version-0 frames: the nine of the section-2 union
// (docs/contract.md section 2), then the three of the Papercusp dialect.
const (
	TypeSession    = "session"
	TypeToken      = "token"
	TypeToolStart  = "tool_start"
	TypeCard       = "card"
	TypeCardClosed = "card_closed"
	TypeState      = "state"
	TypeDone       = "done"
	TypeError      = "error"
	TypeNavigate   = "navigate"

	TypeDelta      = "delta"
	TypeToolCall   = "tool_call"
	TypeToolResult = "tool_result"
)

// SessionFrame opens a chat session: {"type":"session","sessionId":…}.
type SessionFrame struct {
	SessionID string
	Unknown   []chatprotocol.Member
}

// TokenFrame is one streamed text fragment of the Scout dialect, appended
// by consumers: {"type":"token","content":…}.
type TokenFrame struct {
	Content string
	Unknown []chatprotocol.Member
}

// ToolStartFrame says the model invoked a tool, in the Scout dialect:
// {"type":"tool_start","tool":…,"callId":…}. CallID, the Scout dialect's
// member beyond the reference's type, is nil when the frame has none; the
// host's mapping then supplies it on upgrade, as it does for "" (docs/contract.md
// section 9.4).
type ToolStartFrame struct {
	Tool    string
	CallID  *string
	Unknown []chatprotocol.Member
}

// CardFrame carries an open card on the STATE channel:
// {"type":"card","card":{…}} (docs/contract.md section 3), the card as
// the frame carries it.
type CardFrame struct {
	Card    Card
	Unknown []chatprotocol.Member
}

// CardClosedFrame says an open card was answered or withdrawn:
// {"type":"card_closed","correlationId":…}.
type CardClosedFrame struct {
	CorrelationID string
	Unknown       []chatprotocol.Member
}

// StateFrame replaces the product's last state snapshot:
// {"type":"state","version":N,"snapshot":…}. Version is required, a JSON
// number (the upgrade needs a whole one). Snapshot is the JSON text of the
// frame's "snapshot" member as received, null included, and nil when the
// frame has none: the reference types it unknown, whose undefined
// JSON.stringify omits (docs/contract.md section 2.4).
type StateFrame struct {
	Version  float64
	Snapshot json.RawMessage
	Unknown  []chatprotocol.Member
}

// DoneFrame ends a turn: {"type":"done","usage":{…}}. Usage is nil when the
// frame has none.
type DoneFrame struct {
	Usage   *Usage
	Unknown []chatprotocol.Member
}

// Usage is the optional usage of a done frame. Each member is nil when the
// frame does not carry it, so an explicit 0 survives re-encoding.
// TotalTokens counts tokens; CostUSD is the "costUsd" member, in US
// dollars. Both are JSON numbers, as the reference types them. Unlike
// [chatprotocol.Usage] it allows negatives and fractions, as version 0 does;
// the upgrade applies the version-1 rules. Unknown holds the members the
// reference's type does not name, as every object of a frame does.
type Usage struct {
	TotalTokens *float64
	CostUSD     *float64
	Unknown     []chatprotocol.Member
}

// ErrorFrame reports a failure that ends the turn:
// {"type":"error","message":…}.
type ErrorFrame struct {
	Message string
	Unknown []chatprotocol.Member
}

// NavigateFrame asks the client to go to Href, once (TRANSIENT channel):
// {"type":"navigate","href":…}. Href is data: the host decides whether to
// follow it.
type NavigateFrame struct {
	Href    string
	Unknown []chatprotocol.Member
}

// DeltaFrame is a text fragment of the Papercusp dialect, appended by
// consumers: {"type":"delta","text":…}. It upgrades to a version-1 delta.
type DeltaFrame struct {
	Text    string
	Unknown []chatprotocol.Member
}

// ToolCallFrame says the model invoked a tool, in the Papercusp dialect:
// {"type":"tool_call","callId":…,"name":…,"input":…}. CallID is "" when the
// frame carries none (the host's mapping then supplies it on upgrade);
// Input is the JSON text of the optional input (null included), nil when
// absent.
type ToolCallFrame struct {
	CallID  string
	Name    string
	Input   json.RawMessage
	Unknown []chatprotocol.Member
}

// ToolResultFrame closes a tool call, in the Papercusp dialect:
// {"type":"tool_result","callId":…,"status":…,"output":…}. CallID is "" when
// the frame carries none. Status is "" when the frame has none; an absent
// or unknown status is kept here and refused on upgrade
// (unknown-result-status), never guessed. Output is the JSON text of the
// optional output (null included), nil when absent.
type ToolResultFrame struct {
	CallID  string
	Status  chatprotocol.ToolResultStatus
	Output  json.RawMessage
	Unknown []chatprotocol.Member
}

// AppFrame is a frame the union does not describe, kept whole so that
// nothing is dropped (docs/contract.md section 2): a product's own type
// (Scout's products, cart_mutate, open_drawer …), a type of the other
// dialect, or a frame of a union type whose members do not fit that type
// (see [ParseChatEvent]). Type is the frame's "type" member and Raw the
// frame's JSON text.
type AppFrame struct {
	Type string
	Raw  json.RawMessage
}

// FrameType returns "session".
func (*SessionFrame) FrameType() string { return TypeSession }

// FrameType returns "token".
func (*TokenFrame) FrameType() string { return TypeToken }

// FrameType returns "tool_start".
func (*ToolStartFrame) FrameType() string { return TypeToolStart }

// FrameType returns "card".
func (*CardFrame) FrameType() string { return TypeCard }

// FrameType returns "card_closed".
func (*CardClosedFrame) FrameType() string { return TypeCardClosed }

// FrameType returns "state".
func (*StateFrame) FrameType() string { return TypeState }

// FrameType returns "done".
func (*DoneFrame) FrameType() string { return TypeDone }

// FrameType returns "error".
func (*ErrorFrame) FrameType() string { return TypeError }

// FrameType returns "navigate".
func (*NavigateFrame) FrameType() string { return TypeNavigate }

// FrameType returns "delta".
func (*DeltaFrame) FrameType() string { return TypeDelta }

// FrameType returns "tool_call".
func (*ToolCallFrame) FrameType() string { return TypeToolCall }

// FrameType returns "tool_result".
func (*ToolResultFrame) FrameType() string { return TypeToolResult }

// FrameType returns the frame's type, f.Type.
func (f *AppFrame) FrameType() string { return f.Type }

func (*SessionFrame) isFrame()    {}
func (*TokenFrame) isFrame()      {}
func (*ToolStartFrame) isFrame()  {}
func (*CardFrame) isFrame()       {}
func (*CardClosedFrame) isFrame() {}
func (*StateFrame) isFrame()      {}
func (*DoneFrame) isFrame()       {}
func (*ErrorFrame) isFrame()      {}
func (*NavigateFrame) isFrame()   {}
func (*DeltaFrame) isFrame()      {}
func (*ToolCallFrame) isFrame()   {}
func (*ToolResultFrame) isFrame() {}
func (*AppFrame) isFrame()        {}
