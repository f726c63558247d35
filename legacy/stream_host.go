package legacy

import (
	"context"
	"strconv"
	"sync"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// DefaultTurnID is the turn id of a [StreamHost] whose options give none.
const DefaultTurnID = "turn-1"

// StreamHostOptions configures a [StreamHost]. A nil *StreamHostOptions, and
// every zero field, means the default.
type StreamHostOptions struct {
	// ConversationID is the conversation of every envelope. "" means the
	// sessionId of the stream's session frame, which must then come before
	// any other frame: an envelope before it is refused with
	// invalid-envelope at /conversationId.
	ConversationID string
	// TurnID is the turn of every envelope; "" means [DefaultTurnID].
	TurnID string
	// Registry lists the product types the host accepts (Scout's products,
	// cart_mutate …) with their channels; nil accepts none.
	Registry *chatprotocol.Registry
	// CallID returns the call id of the n-th tool start (tool_start or
	// tool_call, counted from 1) of turn that carries no call id of its
	// own; ok false means no mapping (missing-call-id). nil means
	// [DefaultCallID]. It must depend only on its arguments, so that the
	// same tool start of a replayed turn gets the same id.
	CallID func(turnID string, n int) (callID string, ok bool)
}

// DefaultCallID is the call id mapping of a [StreamHost] whose options give
// none: the n-th tool start of turn gets turn + "-call-" + n, such as
// "turn-1-call-2". ok is always true: every tool start has an id.
func DefaultCallID(turnID string, n int) (string, bool) {
	return turnID + "-call-" + strconv.Itoa(n), true
}

// StreamHost is a Host for one legacy stream holding one turn, the host
// that `chatwire decode` acts as (docs/contract.md section 9):
//
//   - the conversation id is [StreamHostOptions.ConversationID], or else the
//     sessionId of the stream's session frame;
//   - the turn id is [StreamHostOptions.TurnID], or else "turn-1";
//   - seq counts the envelopes from 1, and the event id of the envelope of
//     seq N is "e-N";
//   - a tool start without a call id gets the id of its ordinal in the turn
//     ([StreamHostOptions.CallID], by default "turn-1-call-1", "turn-1-call-2" …),
//     so the same tool start gets the same id when the turn is upgraded
//     again, also by a new StreamHost after a reconnect replays the stream;
//     a tool result without a call id is never paired with a call by
//     guessing: it has no mapping (missing-call-id);
//   - product types are those of [StreamHostOptions.Registry].
//
// After a reconnect that replays the stream from its start, upgrade it with
// a new StreamHost of the same options: it gives every envelope the
// identity it had, so a ChatStateV1 sees identical redeliveries. A
// StreamHost is safe for concurrent use, but a stream's frames must be
// upgraded in order.
type StreamHost struct {
	reg    *chatprotocol.Registry
	callID func(string, int) (string, bool)

	mu      sync.Mutex
	conv    string
	turn    string
	seq     int64
	tools   int
	checked bool  // the identity was checked, with the verdict idErr
	idErr   error // the refusal of the ids, once checked
}

// NewStreamHost returns a [StreamHost] with opts (nil means the defaults). It
// does not check the ids: an id that breaks the envelope rules (empty after
// defaults, over 256 bytes) makes every upgrade fail with invalid-envelope.
func NewStreamHost(opts *StreamHostOptions) *StreamHost {
	h := &StreamHost{turn: DefaultTurnID, callID: DefaultCallID}
	if opts != nil {
		h.conv = opts.ConversationID
		if opts.TurnID != "" {
			h.turn = opts.TurnID
		}
		h.reg = opts.Registry
		if opts.CallID != nil {
			h.callID = opts.CallID
		}
	}
	return h
}

// Registry returns [StreamHostOptions.Registry].
func (h *StreamHost) Registry() *chatprotocol.Registry { return h.reg }

// ToolCallID counts the tool starts ([*ToolStartFrame], [*ToolCallFrame])
// without a call id and returns the mapping's id for this one; a
// [*ToolResultFrame], or any other frame, has no mapping. It keeps its state in
// memory, so it never fails: err is always nil and ctx is not used.
func (h *StreamHost) ToolCallID(_ context.Context, f Frame) (string, bool, error) {
	switch f.(type) {
	case *ToolStartFrame, *ToolCallFrame:
	default:
		return "", false, nil
	}
	h.mu.Lock()
	h.tools++
	n, turn := h.tools, h.turn
	h.mu.Unlock()
	id, ok := h.callID(turn, n)
	return id, ok, nil
}

// Identify sets the envelope's conversation, turn, event id and seq (see
// [StreamHost]). Before the conversation id is known, a session event sets
// it and any other event is refused with invalid-envelope at
// /conversationId; a refused envelope does not use up a seq. An identity
// that breaks the envelope rules (docs/contract.md section 5: an id given in the options
// that is empty or over 256 bytes, a seq past MaxSeq) is refused with
// invalid-envelope, as ChatEventEnvelope.Validate refuses it, after its seq
// is used up. The conversation and turn ids do not change once known and
// the event ids are all "e-" and a number, so the identity is checked once
// (and again only for a seq past MaxSeq): [UpgradeLegacyChatFrame] need not
// check the identities of a [StreamHost]. Its errors are all refusals
// ([*refusal.Error]); ctx is not used.
func (h *StreamHost) Identify(_ context.Context, env *chatprotocol.ChatEventEnvelope) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conv == "" {
		s, ok := env.Event.(*chatprotocol.SessionEvent)
		if !ok || s.SessionID == "" {
			return refusal.New(refusal.CodeInvalidEnvelope, "/conversationId", "no conversation id: the host was given none and the stream's session frame has not come")
		}
		h.conv = s.SessionID
	}
	h.seq++
	env.ConversationID, env.TurnID = h.conv, h.turn
	var id [24]byte
	env.EventID = string(strconv.AppendInt(append(id[:0], "e-"...), h.seq, 10))
	env.Seq = h.seq
	if !h.checked || h.seq > chatprotocol.MaxSeq {
		h.checked, h.idErr = true, checkIdentity(env)
	}
	return h.idErr
}

// checksIdentity marks StreamHost as a host whose Identify checks the
// identities it gives.
func (h *StreamHost) checksIdentity() {}

// ConversationID returns the conversation id: the one given, the session
// frame's, or "" while neither is known.
func (h *StreamHost) ConversationID() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conv
}

// TurnID returns the turn id of every envelope.
func (h *StreamHost) TurnID() string { return h.turn }

// Seq returns the seq of the last envelope identified, 0 before the first.
func (h *StreamHost) Seq() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seq
}
