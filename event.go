package chatprotocol

import "encoding/json"

// ChatEvent is one frame of the version-0 SSE union (contract-v1.md section
// 2): a *ChatSession, *ChatToken, *ChatToolStart, *ChatCard,
// *ChatCardClosed, *ChatStateSnapshot, *ChatDone, *ChatError, *ChatNavigate,
// or a *ChatAppEvent for a product's own type. The union is sealed: only
// this package's types implement it. Read one with ParseChatEvent and write
// one with MarshalChatEvent.
type ChatEvent interface {
	// ChatEventType returns the frame's "type" member, such as "token".
	ChatEventType() string
	isChatEvent()
}

// The type names of the version-0 union (contract-v1.md section 2).
const (
	ChatEventSession    = "session"
	ChatEventToken      = "token"
	ChatEventToolStart  = "tool_start"
	ChatEventCard       = "card"
	ChatEventCardClosed = "card_closed"
	ChatEventState      = "state"
	ChatEventDone       = "done"
	ChatEventError      = "error"
	ChatEventNavigate   = "navigate"
)

// ChatEventTypes returns the nine type names of the version-0 union in the
// order of contract-v1.md section 2; the slice is new on each call.
func ChatEventTypes() []string {
	return []string{
		ChatEventSession, ChatEventToken, ChatEventToolStart, ChatEventCard,
		ChatEventCardClosed, ChatEventState, ChatEventDone, ChatEventError,
		ChatEventNavigate,
	}
}

// ChatEventChannel returns the channel of a version-0 type name
// (contract-v1.md section 2): session, token, tool_start, done and error are
// ChannelEvent; card, card_closed and state are ChannelState; navigate is
// ChannelTransient. ok is false for any other name, including every
// product type: a product type has no channel unless its host gives it one.
func ChatEventChannel(t string) (c Channel, ok bool) {
	switch t {
	case ChatEventSession, ChatEventToken, ChatEventToolStart, ChatEventDone, ChatEventError:
		return ChannelEvent, true
	case ChatEventCard, ChatEventCardClosed, ChatEventState:
		return ChannelState, true
	case ChatEventNavigate:
		return ChannelTransient, true
	}
	return 0, false
}

// IsStateChannelEvent reports whether t is a version-0 type of the STATE
// channel (card, card_closed, state): last-write-wins, re-sent as a
// snapshot, never replayed as history (contract-v1.md section 2). It is
// false for unknown types.
func IsStateChannelEvent(t string) bool {
	c, ok := ChatEventChannel(t)
	return ok && c == ChannelState
}

// IsReplayable reports whether t is a version-0 type of the EVENT channel
// (session, token, tool_start, done, error), the only frames that may be
// replayed as history on reconnect (contract-v1.md section 2). It is false
// for STATE and TRANSIENT types and for unknown types. Do not gate replay on
// !IsStateChannelEvent: that would re-fire navigate.
func IsReplayable(t string) bool {
	c, ok := ChatEventChannel(t)
	return ok && c == ChannelEvent
}

// ChatSession opens a chat session: {"type":"session","sessionId":…}.
type ChatSession struct {
	SessionID string
}

// ChatToken is one streamed text fragment, appended by consumers:
// {"type":"token","content":…}.
type ChatToken struct {
	Content string
}

// ChatToolStart says the model invoked a tool: {"type":"tool_start",
// "tool":…}. CallID is the frame's optional "callId" member, "" when the
// frame has none; the legacy adapters use it before the host's mapping
// (contract-v1.md section 9).
type ChatToolStart struct {
	Tool   string
	CallID string
}

// ChatCard carries an open card on the STATE channel:
// {"type":"card","card":{…}}.
type ChatCard struct {
	Card OpenCardSnapshot
}

// ChatCardClosed says an open card was answered or withdrawn:
// {"type":"card_closed","correlationId":…}.
type ChatCardClosed struct {
	CorrelationID string
}

// ChatStateSnapshot replaces the product's last state snapshot:
// {"type":"state","version":N,"snapshot":…}. Version is an integer (0 when
// the frame has none). Snapshot is the bytes of the frame's "snapshot"
// member as received (valid UTF-8 JSON), or nil when the frame has none.
type ChatStateSnapshot struct {
	Version  int64
	Snapshot json.RawMessage
}

// ChatDone ends a turn: {"type":"done","usage":{…}}; Usage is nil when the
// frame has no usage.
type ChatDone struct {
	Usage *ChatUsage
}

// ChatUsage is the optional usage of a done frame. Each member is nil when
// the frame does not carry it, so an explicit 0 survives re-encoding.
// TotalTokens counts tokens; CostUsd is in US dollars.
type ChatUsage struct {
	TotalTokens *int64
	CostUsd     *float64
}

// ChatError reports a failure that ends the turn:
// {"type":"error","message":…}.
type ChatError struct {
	Message string
}

// ChatNavigate asks the client to go to Href, once (TRANSIENT channel):
// {"type":"navigate","href":…}. Href is data: the host decides whether to
// follow it.
type ChatNavigate struct {
	Href string
}

// ChatAppEvent is a frame the union does not describe, kept whole so that
// nothing is dropped (contract-v1.md section 2): a product's own type
// (Scout's products, broaden, highlight, cart_mutate, open_drawer,
// prefill_form …), or a frame of a union type whose members do not fit
// that type (see ParseChatEvent). Type is the frame's "type" member and Raw
// the frame's JSON text.
type ChatAppEvent struct {
	Type string
	Raw  json.RawMessage
}

// ChatEventType returns "session".
func (*ChatSession) ChatEventType() string { return ChatEventSession }

// ChatEventType returns "token".
func (*ChatToken) ChatEventType() string { return ChatEventToken }

// ChatEventType returns "tool_start".
func (*ChatToolStart) ChatEventType() string { return ChatEventToolStart }

// ChatEventType returns "card".
func (*ChatCard) ChatEventType() string { return ChatEventCard }

// ChatEventType returns "card_closed".
func (*ChatCardClosed) ChatEventType() string { return ChatEventCardClosed }

// ChatEventType returns "state".
func (*ChatStateSnapshot) ChatEventType() string { return ChatEventState }

// ChatEventType returns "done".
func (*ChatDone) ChatEventType() string { return ChatEventDone }

// ChatEventType returns "error".
func (*ChatError) ChatEventType() string { return ChatEventError }

// ChatEventType returns "navigate".
func (*ChatNavigate) ChatEventType() string { return ChatEventNavigate }

// ChatEventType returns the frame's type, e.Type.
func (e *ChatAppEvent) ChatEventType() string { return e.Type }

func (*ChatSession) isChatEvent()       {}
func (*ChatToken) isChatEvent()         {}
func (*ChatToolStart) isChatEvent()     {}
func (*ChatCard) isChatEvent()          {}
func (*ChatCardClosed) isChatEvent()    {}
func (*ChatStateSnapshot) isChatEvent() {}
func (*ChatDone) isChatEvent()          {}
func (*ChatError) isChatEvent()         {}
func (*ChatNavigate) isChatEvent()      {}
func (*ChatAppEvent) isChatEvent()      {}
