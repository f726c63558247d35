package refusal

import "github.com/Papercusp/chat-protocol-go/internal/wire"

// Error is the module's one refusal type (docs/contract.md section 12), a
// struct with the fields
//
//	Code    Code   // stable, as in the fixtures: "sequence-gap" …
//	Path    string // JSON pointer (RFC 6901) of the offending member, "" when none applies
//	Message string // for people only; may change between releases
//	Err     error  // the optional cause, returned by Unwrap
//
// Every package of the module returns it. Branch with errors.Is against a
// sentinel (ErrSequenceGap …), errors.AsType[*Error] or CodeOf, never on
// message text. What is safe to show a client is the Code and the Path:
// Message and Err may quote a store's own error text.
type Error = wire.Error

// Code is the stable name of a refusal, as written on the wire and in the
// fixtures (docs/contract.md section 12). The zero Code "" means no refusal.
type Code = wire.Code

// Sentinel is the errors.Is target of one Code: errors.Is(err, s) holds for
// every *Error of that code in err's chain, and for s itself, whatever wraps
// it. The sentinels below are constants: no assignment anywhere changes what
// they match. A store may return one as its error.
type Sentinel = wire.Sentinel

// CodeOf returns the Code of the first *Error or Sentinel in err's chain, or
// "" when err is nil or carries neither.
func CodeOf(err error) Code { return wire.CodeOf(err) }

// Codes returns every code of the module in a fixed order; the slice is new
// on each call.
func Codes() []Code { return wire.Codes() }

// The codes of the version-1 wire contract and version 0 (docs/contract.md section 12); the sentinel of each, below,
// says when it is returned.
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
)

// The sentinels of the wire contract, one per code, for errors.Is.
const (
	// ErrUnsupportedVersion: a schema or negotiated version other than the
	// explicit 0 or 1 (sections 1 and 5).
	ErrUnsupportedVersion Sentinel = Sentinel(CodeUnsupportedVersion)
	// ErrUnsupportedEvent: an event type that is neither in the contract nor
	// registered by the host, or an event without a legacy form (sections 6, 9).
	ErrUnsupportedEvent Sentinel = Sentinel(CodeUnsupportedEvent)
	// ErrInvalidEnvelope: an envelope member missing, of the wrong type or out
	// of range, a duplicated or case-variant member name, invalid UTF-8, or
	// nesting beyond the depth limit (section 5).
	ErrInvalidEnvelope Sentinel = Sentinel(CodeInvalidEnvelope)
	// ErrInvalidEvent: an event member missing, of the wrong type or out of
	// range (section 6).
	ErrInvalidEvent Sentinel = Sentinel(CodeInvalidEvent)
	// ErrMissingCallID: a tool event without a stable call id, and no host
	// mapping to give it one (sections 6, 9).
	ErrMissingCallID Sentinel = Sentinel(CodeMissingCallID)
	// ErrUnknownResultStatus: a tool_result status that is absent or not one
	// of ok, error, cancelled (sections 6, 9).
	ErrUnknownResultStatus Sentinel = Sentinel(CodeUnknownResultStatus)
	// ErrForeignFrame: a frame of another conversation or turn (sections 7, 11).
	ErrForeignFrame Sentinel = Sentinel(CodeForeignFrame)
	// ErrSequenceGap: a seq that skips one or more values (sections 7, 11).
	ErrSequenceGap Sentinel = Sentinel(CodeSequenceGap)
	// ErrSequenceReordered: a seq at or below one already applied that is not
	// an identical redelivery, or a duplicated seq in a replay suffix
	// (sections 7, 11).
	ErrSequenceReordered Sentinel = Sentinel(CodeSequenceReordered)
	// ErrUnknownCall: a tool_result whose callId no tool_call opened (section 7).
	ErrUnknownCall Sentinel = Sentinel(CodeUnknownCall)
	// ErrTurnTerminated: an envelope for a turn that already completed,
	// failed or was cancelled, other than a late tool_result (section 7).
	ErrTurnTerminated Sentinel = Sentinel(CodeTurnTerminated)
	// ErrUnsupportedCapability: a required capability the peer does not
	// declare (section 8).
	ErrUnsupportedCapability Sentinel = Sentinel(CodeUnsupportedCapability)
	// ErrFrameTooLarge: a frame, line or payload beyond the configured size
	// limit (sections 5, 10).
	ErrFrameTooLarge Sentinel = Sentinel(CodeFrameTooLarge)
	// ErrStaleCursor: a resume cursor below the replay window's retained
	// lower bound (section 11).
	ErrStaleCursor Sentinel = Sentinel(CodeStaleCursor)
	// ErrCursorAhead: a resume cursor beyond the replay window's latest seq
	// (section 11).
	ErrCursorAhead Sentinel = Sentinel(CodeCursorAhead)
	// ErrInvalidCard: a card spec, presentation, option, snapshot or
	// response that breaks the card rules (section 3).
	ErrInvalidCard Sentinel = Sentinel(CodeInvalidCard)
)

// The codes of recovery/ (docs/contract.md section 13); the sentinel of each, below,
// says when it is returned.
const (
	CodeTurnNotRunning        = wire.CodeTurnNotRunning
	CodeUnauthorized          = wire.CodeUnauthorized
	CodeClaimConflict         = wire.CodeClaimConflict
	CodeNeedsReconciliation   = wire.CodeNeedsReconciliation
	CodeCheckpointWriteFailed = wire.CodeCheckpointWriteFailed
	CodeAdmissionUnavailable  = wire.CodeAdmissionUnavailable
	CodeUnknownEffect         = wire.CodeUnknownEffect
	CodeInvalidTurn           = wire.CodeInvalidTurn
	CodeStoreUnavailable      = wire.CodeStoreUnavailable
	CodeInvalidInput          = wire.CodeInvalidInput
)

// The sentinels of recovery/, one per code, for errors.Is.
const (
	// ErrTurnNotRunning: the turn is not running (never started, cancelled or
	// finished), so nothing may be claimed or admitted.
	ErrTurnNotRunning Sentinel = Sentinel(CodeTurnNotRunning)
	// ErrUnauthorized: the caller's current authorization does not allow the
	// operation.
	ErrUnauthorized Sentinel = Sentinel(CodeUnauthorized)
	// ErrClaimConflict: a compare-and-swap lost to a concurrent writer, or
	// the claim revision moved.
	ErrClaimConflict Sentinel = Sentinel(CodeClaimConflict)
	// ErrNeedsReconciliation: the outcome of an effect or a write is unknown;
	// the host must reconcile through its own idempotency lookup.
	ErrNeedsReconciliation Sentinel = Sentinel(CodeNeedsReconciliation)
	// ErrCheckpointWriteFailed: a durable write failed; nothing is assumed
	// about it.
	ErrCheckpointWriteFailed Sentinel = Sentinel(CodeCheckpointWriteFailed)
	// ErrAdmissionUnavailable: the store has no admission seam, so dispatch
	// is refused.
	ErrAdmissionUnavailable Sentinel = Sentinel(CodeAdmissionUnavailable)
	// ErrUnknownEffect: an effect identity the host did not authorize when
	// the turn started.
	ErrUnknownEffect Sentinel = Sentinel(CodeUnknownEffect)
	// ErrInvalidTurn: a turn or effect reference, effect list or end status
	// that breaks the rules of recovery (an empty or over-long id, a
	// duplicated effect id, an end status that is not terminal).
	ErrInvalidTurn Sentinel = Sentinel(CodeInvalidTurn)
	// ErrStoreUnavailable: the host supplied no store or replay source for
	// the operation, or one failed a read; nothing was written.
	ErrStoreUnavailable Sentinel = Sentinel(CodeStoreUnavailable)
	// ErrInvalidInput: an id or value that no store can hold as sent (a NUL
	// character, invalid UTF-8, a JSON string escaping U+0000); refused
	// before any store is asked, so a retry never helps. Recovery and
	// interactions return it alike, whatever the store.
	ErrInvalidInput Sentinel = Sentinel(CodeInvalidInput)
)

// The codes of sse/ (docs/contract.md section 10); the sentinel of each, below,
// says when it is returned.
const (
	CodeInvalidFrame = wire.CodeInvalidFrame
)

// The sentinels of sse/, one per code, for errors.Is.
const (
	// ErrInvalidFrame: an SSE frame the encoder will not write because a
	// field would break out of its line: a CR or LF in an id or event name,
	// or a NUL in an id (section 10).
	ErrInvalidFrame Sentinel = Sentinel(CodeInvalidFrame)
)

// The codes of interactions/ (docs/contract.md section 13); the sentinel of each, below,
// says when it is returned.
const (
	CodeCardNotFound    = wire.CodeCardNotFound
	CodeCardExists      = wire.CodeCardExists
	CodeDuplicateAnswer = wire.CodeDuplicateAnswer
	CodeAlreadyAnswered = wire.CodeAlreadyAnswered
	CodeAnswerExpired   = wire.CodeAnswerExpired
	CodeCardCancelled   = wire.CodeCardCancelled
	CodeCardSuperseded  = wire.CodeCardSuperseded
	CodeStaleRevision   = wire.CodeStaleRevision
	CodeSchemaMismatch  = wire.CodeSchemaMismatch
	CodeInvalidAnswer   = wire.CodeInvalidAnswer
	CodeUnknownSchema   = wire.CodeUnknownSchema
	CodeNotExpired      = wire.CodeNotExpired
)

// The sentinels of interactions/, one per code, for errors.Is.
const (
	// ErrCardNotFound: no card under the key, or a card bound to another
	// conversation, principal, tenant, customer or public owner; the two are
	// indistinguishable so that a foreign caller learns nothing.
	ErrCardNotFound Sentinel = Sentinel(CodeCardNotFound)
	// ErrCardExists: a card is already open under the key.
	ErrCardExists Sentinel = Sentinel(CodeCardExists)
	// ErrDuplicateAnswer: the same submission (same id and content) was
	// already stored for the card.
	ErrDuplicateAnswer Sentinel = Sentinel(CodeDuplicateAnswer)
	// ErrAlreadyAnswered: the card was already answered or declined by
	// another submission.
	ErrAlreadyAnswered Sentinel = Sentinel(CodeAlreadyAnswered)
	// ErrAnswerExpired: the card's deadline has passed.
	ErrAnswerExpired Sentinel = Sentinel(CodeAnswerExpired)
	// ErrCardCancelled: the card was cancelled.
	ErrCardCancelled Sentinel = Sentinel(CodeCardCancelled)
	// ErrCardSuperseded: the card was replaced by another card.
	ErrCardSuperseded Sentinel = Sentinel(CodeCardSuperseded)
	// ErrStaleRevision: the card's revision moved since the answer was
	// read or validated.
	ErrStaleRevision Sentinel = Sentinel(CodeStaleRevision)
	// ErrSchemaMismatch: the card's schema changed since the answer was
	// validated, or a schema id and revision was registered twice with
	// different content.
	ErrSchemaMismatch Sentinel = Sentinel(CodeSchemaMismatch)
	// ErrInvalidAnswer: a malformed submission, or a value its card's
	// schema refuses.
	ErrInvalidAnswer Sentinel = Sentinel(CodeInvalidAnswer)
	// ErrUnknownSchema: no schema is registered under the card's schema id
	// and revision.
	ErrUnknownSchema Sentinel = Sentinel(CodeUnknownSchema)
	// ErrNotExpired: an expiry was requested before the card's deadline.
	ErrNotExpired Sentinel = Sentinel(CodeNotExpired)
)
