package recovery

import "github.com/Papercusp/chat-protocol-go/internal/wire"

// Error is the module's one refusal type (contract-v1.md section 12),
// re-exported so that a host needs only this package: a stable Code, a
// JSON-pointer Path where one applies, a Message for people only and an
// optional wrapped cause. Branch with errors.Is against the sentinels below,
// errors.AsType[*Error] or CodeOf, never on message text.
type Error = wire.Error

// Code is the stable name of a refusal (contract-v1.md section 12).
type Code = wire.Code

// The codes this package returns (contract-v1.md sections 11 and 13, seed
// 000); see the sentinel of each for when.
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
	CodeStaleCursor           = wire.CodeStaleCursor
	CodeCursorAhead           = wire.CodeCursorAhead
	CodeSequenceGap           = wire.CodeSequenceGap
	CodeSequenceReordered     = wire.CodeSequenceReordered
	CodeForeignFrame          = wire.CodeForeignFrame
)

// Sentinels, one per code this package returns, for errors.Is. Each is an
// *Error carrying only its Code; errors.Is matches any *Error of that code,
// however wrapped. Store implementations return some of them too: the
// package documentation lists which.
var (
	// ErrTurnNotRunning: the turn was never started, or was cancelled or
	// finished, so nothing may be claimed or admitted (section 13).
	ErrTurnNotRunning = wire.Sentinel(CodeTurnNotRunning)
	// ErrUnauthorized: the Authorizer refused the caller, at the start of
	// an operation or when AdmitDispatch revalidated it inside the fence.
	ErrUnauthorized = wire.Sentinel(CodeUnauthorized)
	// ErrClaimConflict: a compare-and-swap lost to a concurrent writer, the
	// claim revision moved, or another worker holds a live claim.
	ErrClaimConflict = wire.Sentinel(CodeClaimConflict)
	// ErrNeedsReconciliation: the outcome of an effect or of a durable write
	// is unknown. The host looks the effect up in its own idempotency
	// records and calls TurnRecovery.Reconcile; a retry never redispatches.
	// A Store also returns it for a write whose acknowledgement was lost.
	ErrNeedsReconciliation = wire.Sentinel(CodeNeedsReconciliation)
	// ErrCheckpointWriteFailed: a durable write is known not to have been
	// applied. A Store returns it only when it knows that.
	ErrCheckpointWriteFailed = wire.Sentinel(CodeCheckpointWriteFailed)
	// ErrAdmissionUnavailable: the Store does not implement Admitter, so
	// dispatch is refused (seed 000: a missing admission seam refuses
	// dispatch).
	ErrAdmissionUnavailable = wire.Sentinel(CodeAdmissionUnavailable)
	// ErrUnknownEffect: an effect id that was not authorized when the turn
	// started.
	ErrUnknownEffect = wire.Sentinel(CodeUnknownEffect)
	// ErrInvalidTurn: an empty or over-long id, a duplicated effect id, or an
	// end status that is not terminal.
	ErrInvalidTurn = wire.Sentinel(CodeInvalidTurn)
	// ErrStoreUnavailable: the host supplied no Store or ReplaySource for
	// the operation, or a read failed; nothing was written.
	ErrStoreUnavailable = wire.Sentinel(CodeStoreUnavailable)
	// ErrStaleCursor: a resume cursor below the window's lower bound
	// (section 11).
	ErrStaleCursor = wire.Sentinel(CodeStaleCursor)
	// ErrCursorAhead: a resume cursor beyond the window's latest seq
	// (section 11).
	ErrCursorAhead = wire.Sentinel(CodeCursorAhead)
	// ErrSequenceGap: a replay suffix that skips a seq or stops before the
	// window's latest, or a window whose lower bound is above its latest
	// (section 11).
	ErrSequenceGap = wire.Sentinel(CodeSequenceGap)
	// ErrSequenceReordered: a replay frame whose seq repeats or goes back,
	// or lies beyond the window's latest (section 11).
	ErrSequenceReordered = wire.Sentinel(CodeSequenceReordered)
	// ErrForeignFrame: a replay frame of another conversation or turn
	// (section 11).
	ErrForeignFrame = wire.Sentinel(CodeForeignFrame)
)

// CodeOf returns the Code of the first *Error in err's chain, or "" when err
// is nil or carries none.
func CodeOf(err error) Code { return wire.CodeOf(err) }
