package stream

import "github.com/Papercusp/chat-protocol-go/refusal"

// The codes of the Handler's own refusals (docs/contract.md sections 12
// and 14.3), and their sentinels for errors.Is.
const (
	// CodeInvalidCursor: a Last-Event-ID (or lastEventId) that is not the
	// decimal form of a seq from 0 to 2^53-1 (400).
	CodeInvalidCursor refusal.Code = "invalid-cursor"
	// CodeTurnNotFound: an unknown turn, a malformed turn key, or a caller
	// the Authorize hook denies; the three are indistinguishable (404).
	CodeTurnNotFound refusal.Code = "turn-not-found"

	// ErrInvalidCursor is the sentinel of CodeInvalidCursor.
	ErrInvalidCursor refusal.Sentinel = refusal.Sentinel(CodeInvalidCursor)
	// ErrTurnNotFound is the sentinel of CodeTurnNotFound. An Authorize
	// hook may return it, or refusal.ErrUnauthorized, to deny.
	ErrTurnNotFound refusal.Sentinel = refusal.Sentinel(CodeTurnNotFound)
)
