package legacy

import chatprotocol "github.com/Papercusp/chat-protocol-go"

// FrameTypes returns the nine type names of the section-2 union in the
// order of docs/contract.md section 2, each of which has a channel
// ([FrameChannel]); the slice is new on each call. The Papercusp types
// ([TypeDelta], [TypeToolCall], [TypeToolResult]) are not among them.
func FrameTypes() []string {
	return []string{
		TypeSession, TypeToken, TypeToolStart, TypeCard,
		TypeCardClosed, TypeState, TypeDone, TypeError,
		TypeNavigate,
	}
}

// FrameChannel returns the channel of a version-0 type name
// (docs/contract.md section 2): session, token, tool_start, done and error
// are ChannelEvent; card, card_closed and state are ChannelState; navigate
// is ChannelTransient. ok is false for any other name, including every
// product type (a product type has no channel unless its host gives it
// one) and the Papercusp types, which have theirs once upgraded
// ([chatprotocol.EventChannel]).
func FrameChannel(t string) (c chatprotocol.Channel, ok bool) {
	switch t {
	case TypeSession, TypeToken, TypeToolStart, TypeDone, TypeError:
		return chatprotocol.ChannelEvent, true
	case TypeCard, TypeCardClosed, TypeState:
		return chatprotocol.ChannelState, true
	case TypeNavigate:
		return chatprotocol.ChannelTransient, true
	}
	return 0, false
}

// IsStateFrame reports whether t is a version-0 type of the STATE channel
// (card, card_closed, state): last-write-wins, re-sent as a snapshot,
// never replayed as history (docs/contract.md section 2). It is false for
// unknown types.
func IsStateFrame(t string) bool {
	c, ok := FrameChannel(t)
	return ok && c == chatprotocol.ChannelState
}

// IsReplayableFrame reports whether t is a version-0 type of the EVENT
// channel (session, token, tool_start, done, error), the only frames that
// may be replayed as history on reconnect (docs/contract.md section 2). It
// is false for STATE and TRANSIENT types and for unknown types. Do not gate
// replay on ![IsStateFrame]: that would re-fire navigate.
func IsReplayableFrame(t string) bool {
	c, ok := FrameChannel(t)
	return ok && c == chatprotocol.ChannelEvent
}
