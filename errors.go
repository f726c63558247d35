package chatprotocol

import "github.com/Papercusp/chat-protocol-go/internal/wire"

// Error is the module's one refusal type (contract-v1.md section 12), a
// struct with the fields
//
//	Code    Code   // stable, as in the fixtures: "sequence-gap" …
//	Path    string // JSON pointer of the offending member, "" when none applies
//	Message string // for people only
//	Err     error  // the optional cause, returned by Unwrap
//
// Branch on it with errors.Is against a sentinel (ErrSequenceGap …),
// errors.AsType[*Error], or CodeOf, never on message text. The same type is
// returned by every package of the module.
type Error = wire.Error

// Code is the stable name of a refusal, as written on the wire and in
// fixtures (contract-v1.md section 12).
type Code = wire.Code

// The refusal codes of the wire contract (contract-v1.md section 12); see
// the sentinel of each for when it is returned.
const (
	CodeUnsupportedVersion    = wire.CodeUnsupportedVersion
	CodeUnsupportedEvent      = wire.CodeUnsupportedEvent
	CodeInvalidEnvelope       = wire.CodeInvalidEnvelope
	CodeInvalidEvent          = wire.CodeInvalidEvent
	CodeMissingCallID         = wire.CodeMissingCallID
	CodeUnknownResultStatus   = wire.CodeUnknownResultStatus
	CodeForeignFrame          = wire.CodeForeignFrame
	CodeSequenceGap           = wire.CodeSequenceGap
	CodeSequenceReordered     = wire.CodeSequenceReordered
	CodeUnknownCall           = wire.CodeUnknownCall
	CodeTurnTerminated        = wire.CodeTurnTerminated
	CodeUnsupportedCapability = wire.CodeUnsupportedCapability
	CodeFrameTooLarge         = wire.CodeFrameTooLarge
	CodeStaleCursor           = wire.CodeStaleCursor
	CodeCursorAhead           = wire.CodeCursorAhead
	CodeInvalidCard           = wire.CodeInvalidCard
	CodeInvalidFrame          = wire.CodeInvalidFrame
)

// Sentinels, one per code of the wire contract, for errors.Is. Each is an
// *Error carrying only its Code; errors.Is matches any *Error of that code.
var (
	// ErrUnsupportedVersion: a version other than the explicit 0 or 1
	// (sections 1, 5).
	ErrUnsupportedVersion = wire.Sentinel(CodeUnsupportedVersion)
	// ErrUnsupportedEvent: an event type neither in the contract nor
	// registered by the host, or without a legacy form (sections 6, 9).
	ErrUnsupportedEvent = wire.Sentinel(CodeUnsupportedEvent)
	// ErrInvalidEnvelope: a malformed envelope (section 5).
	ErrInvalidEnvelope = wire.Sentinel(CodeInvalidEnvelope)
	// ErrInvalidEvent: a malformed event (section 6).
	ErrInvalidEvent = wire.Sentinel(CodeInvalidEvent)
	// ErrMissingCallID: a tool event without a stable call id (sections 6, 9).
	ErrMissingCallID = wire.Sentinel(CodeMissingCallID)
	// ErrUnknownResultStatus: a tool_result status absent or unknown
	// (sections 6, 9).
	ErrUnknownResultStatus = wire.Sentinel(CodeUnknownResultStatus)
	// ErrForeignFrame: a frame of another conversation or turn (sections 7, 11).
	ErrForeignFrame = wire.Sentinel(CodeForeignFrame)
	// ErrSequenceGap: a seq that skips (sections 7, 11).
	ErrSequenceGap = wire.Sentinel(CodeSequenceGap)
	// ErrSequenceReordered: a seq at or below one applied, not an identical
	// redelivery (sections 7, 11).
	ErrSequenceReordered = wire.Sentinel(CodeSequenceReordered)
	// ErrUnknownCall: a tool_result for a call never opened (section 7).
	ErrUnknownCall = wire.Sentinel(CodeUnknownCall)
	// ErrTurnTerminated: an envelope for a finished turn (section 7).
	ErrTurnTerminated = wire.Sentinel(CodeTurnTerminated)
	// ErrUnsupportedCapability: a required capability not declared (section 8).
	ErrUnsupportedCapability = wire.Sentinel(CodeUnsupportedCapability)
	// ErrFrameTooLarge: input beyond a size limit (sections 5, 10).
	ErrFrameTooLarge = wire.Sentinel(CodeFrameTooLarge)
	// ErrStaleCursor: a resume cursor below the retained window (section 11).
	ErrStaleCursor = wire.Sentinel(CodeStaleCursor)
	// ErrCursorAhead: a resume cursor beyond the latest seq (section 11).
	ErrCursorAhead = wire.Sentinel(CodeCursorAhead)
	// ErrInvalidCard: a card or card response that breaks section 3.
	ErrInvalidCard = wire.Sentinel(CodeInvalidCard)
	// ErrInvalidFrame: an SSE frame whose id or event name would break out
	// of its line, or whose event name is not its envelope's event type
	// (section 10).
	ErrInvalidFrame = wire.Sentinel(CodeInvalidFrame)
)

// CodeOf returns the Code of the first *Error in err's chain, or "" when err
// is nil or carries none.
func CodeOf(err error) Code { return wire.CodeOf(err) }

// Codes returns every refusal code of the module, including those of
// recovery/ and interactions/, in a fixed order; the slice is new on each
// call.
func Codes() []Code { return wire.Codes() }
