package legacy

import (
	"context"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Host supplies what a version-1 envelope needs and a legacy frame does
// not carry: identity comes from the host, nothing is invented
// (docs/contract.md section 9). [UpgradeLegacyChatFrame] asks it; it never
// makes an id up itself. [StreamHost] is a ready-made Host for one stream.
//
// A Host may keep its mappings in a store (a database of call ids and
// seqs): its methods take the upgrade's ctx, and tell a failure of that
// store (an error) from an answer (no mapping, a refusal). An error that is
// not a [*refusal.Error] is returned by [UpgradeLegacyChatFrame] wrapped
// in a [*HostError], never turned into a contract code, so the caller can
// retry an infrastructure failure and drop a refused frame.
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
	// none: a [*ToolStartFrame] or [*ToolCallFrame], or a [*ToolResultFrame].
	// The same tool frame of the same turn must get the same id every time
	// the turn's frames are upgraded, also after a reconnect replays them.
	// ok false with a nil err means the host has no mapping, and the frame
	// is refused with missing-call-id. err reports that the host could not
	// tell (its store failed, ctx ended): the upgrade fails with a
	// [*HostError] wrapping it, or with err itself when it is a
	// [*refusal.Error], a refusal the host chose; callID and ok are then
	// ignored. It is called only for a frame that is otherwise valid, at
	// most once per frame.
	ToolCallID(ctx context.Context, f Frame) (callID string, ok bool, err error)

	// Identify gives env, whose Event is set, its identity: ConversationID,
	// TurnID, EventID and Seq (the seq of the turn's envelopes, contiguous
	// from 1), and optionally At. It is called once per envelope, in order,
	// only after every envelope of the frame was built and checked. A
	// refusal it returns (a [*refusal.Error], conventionally
	// invalid-envelope) is returned by [UpgradeLegacyChatFrame] as it is; any
	// other error (its store failed, ctx ended) is returned wrapped in a
	// [*HostError].
	Identify(ctx context.Context, env *chatprotocol.ChatEventEnvelope) error
}

// HostError is the error of an upgrade that failed because its Host did:
// ToolCallID or Identify returned an error that is not a
// [*refusal.Error], such as a store that is down or a cancelled ctx. It
// is no refusal of the frame: the frame may be upgraded again once the host
// recovers. Test for it with errors.AsType[*HostError]; [errors.Is] sees the
// host's error through Unwrap.
type HostError struct {
	// Method is the Host method that failed: "ToolCallID" or "Identify".
	Method string
	// Err is the error the host returned.
	Err error
}

// Error names the method and the host's error; the text is informative
// only.
func (e *HostError) Error() string {
	return "legacy: the host's " + e.Method + " failed: " + e.Err.Error()
}

// Unwrap returns the host's error.
func (e *HostError) Unwrap() error { return e.Err }

// hostErr returns err as the upgrade returns it: a refusal the host chose
// as it is, anything else wrapped in a *HostError for method.
func hostErr(method string, err error) error {
	if _, refusal := err.(*refusal.Error); refusal {
		return err
	}
	return &HostError{Method: method, Err: err}
}
