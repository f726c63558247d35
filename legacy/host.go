package legacy

import chatprotocol "github.com/Papercusp/chat-protocol-go"

// Host supplies what a version-1 envelope needs and a legacy frame does
// not carry (contract-v1.md section 9, seed 000: "Identity comes from the
// host; nothing is invented"). UpgradeLegacyChatFrame asks it; it never
// makes an id up itself. StreamHost is a ready-made Host for one stream.
//
// A Host is stateful (it counts seqs and tool starts), so the frames of one
// turn must be upgraded in the order they were received. Implementations
// used from several goroutines must be safe for concurrent use.
type Host interface {
	// Registry returns the product types the host accepts, each with its
	// channel; a legacy frame of any other type that the dialect does not
	// define is refused with unsupported-event. nil accepts none.
	Registry() *chatprotocol.Registry

	// ToolCallID returns the stable call id of a tool frame that carries
	// none: a *chatprotocol.ChatToolStart or *ToolCall, or a *ToolResult.
	// The same tool frame of the same turn must get the same id every time
	// the turn's frames are upgraded, also after a reconnect replays them.
	// ok false means the host has no mapping, and the frame is refused with
	// missing-call-id. It is called only for a frame that is otherwise
	// valid, at most once per frame.
	ToolCallID(f Frame) (callID string, ok bool)

	// Identify gives env, whose Event is set, its identity: ConversationID,
	// TurnID, EventID and Seq (the seq of the turn's envelopes, contiguous
	// from 1), and optionally At. It is called once per envelope, in order,
	// only after every envelope of the frame was built and checked. A
	// refusal it returns (an *Error, conventionally invalid-envelope) is
	// returned by UpgradeLegacyChatFrame as it is.
	Identify(env *chatprotocol.ChatEventEnvelope) error
}
