package chatprotocol

// Channel is the delivery class of an event type (docs/contract.md sections 2
// and 6). Every event type belongs to exactly one channel.
type Channel uint8

// The three channels. The zero Channel is not a channel: functions that
// look one up report ok == false instead of returning it.
const (
	// ChannelEvent is append-only history, replayed on reconnect.
	ChannelEvent Channel = iota + 1
	// ChannelState is last-write-wins, re-sent as a snapshot, never replayed
	// as history.
	ChannelState
	// ChannelTransient is fire-once, never re-sent.
	ChannelTransient
)

// String returns "event", "state", "transient", or "invalid" for anything
// else.
func (c Channel) String() string {
	switch c {
	case ChannelEvent:
		return "event"
	case ChannelState:
		return "state"
	case ChannelTransient:
		return "transient"
	}
	return "invalid"
}
