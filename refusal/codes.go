package refusal

// The codes, one block for the whole module, grouped by the package that
// mainly returns them (docs/contract.md section 12 lists which returns which).
const (
	// Codes of the wire contract (docs/contract.md section 12).
	// CodeUnsupportedVersion: a schema or negotiated version other than the
	// explicit 0 or 1 (docs/contract.md sections 1 and 5).
	CodeUnsupportedVersion Code = "unsupported-version"
	// CodeUnsupportedEvent: an event type that is neither in the contract nor
	// registered by the host, or an event without a legacy form (docs/contract.md sections 6, 9).
	CodeUnsupportedEvent Code = "unsupported-event"
	// CodeInvalidEnvelope: an envelope member missing, of the wrong type or out
	// of range, a duplicated or case-variant member name, invalid UTF-8, or
	// nesting beyond the depth limit (docs/contract.md section 5).
	CodeInvalidEnvelope Code = "invalid-envelope"
	// CodeInvalidEvent: an event member missing, of the wrong type or out of
	// range (docs/contract.md section 6).
	CodeInvalidEvent Code = "invalid-event"
	// CodeMissingCallID: a tool event without a stable call id, and no host
	// mapping to give it one (docs/contract.md sections 6, 9).
	CodeMissingCallID Code = "missing-call-id"
	// CodeUnknownResultStatus: a tool_result status that is absent or not one
	// of ok, error, cancelled (docs/contract.md sections 6, 9).
	CodeUnknownResultStatus Code = "unknown-result-status"
	// CodeForeignFrame: a frame of another conversation or turn (docs/contract.md sections 7, 11).
	CodeForeignFrame Code = "foreign-frame"
	// CodeSequenceGap: a seq that skips one or more values (docs/contract.md sections 7, 11).
	CodeSequenceGap Code = "sequence-gap"
	// CodeSequenceReordered: a seq at or below one already applied that is not
	// an identical redelivery, or a duplicated seq in a replay suffix
	// (docs/contract.md sections 7, 11).
	CodeSequenceReordered Code = "sequence-reordered"
	// CodeUnknownCall: a tool_result whose callId no tool_call opened (docs/contract.md section 7).
	CodeUnknownCall Code = "unknown-call"
	// CodeTurnTerminated: an envelope for a turn that already completed,
	// failed or was cancelled, other than a late tool_result (docs/contract.md section 7).
	CodeTurnTerminated Code = "turn-terminated"
	// CodeUnsupportedCapability: a required capability the peer does not
	// declare (docs/contract.md section 8).
	CodeUnsupportedCapability Code = "unsupported-capability"
	// CodeFrameTooLarge: a frame, line or payload beyond the configured size
	// limit (docs/contract.md sections 5, 10).
	CodeFrameTooLarge Code = "frame-too-large"
	// CodeStaleCursor: a resume cursor below the replay window's retained
	// lower bound (docs/contract.md section 11).
	CodeStaleCursor Code = "stale-cursor"
	// CodeCursorAhead: a resume cursor beyond the replay window's latest seq
	// (docs/contract.md section 11).
	CodeCursorAhead Code = "cursor-ahead"
	// CodeInvalidCard: a card spec, presentation, option, snapshot or
	// response that breaks the card rules (docs/contract.md section 3).
	CodeInvalidCard Code = "invalid-card"

	// Codes of recovery/ (docs/contract.md section 13).
	// CodeTurnNotRunning: the turn is not running (never started, cancelled or
	// finished), so nothing may be claimed or admitted.
	CodeTurnNotRunning Code = "turn-not-running"
	// CodeUnauthorized: the caller's current authorization does not allow the
	// operation.
	CodeUnauthorized Code = "unauthorized"
	// CodeClaimConflict: a compare-and-swap lost to a concurrent writer, or
	// the claim revision moved.
	CodeClaimConflict Code = "claim-conflict"
	// CodeNeedsReconciliation: the outcome of an effect or a write is unknown;
	// the host must reconcile through its own idempotency lookup.
	CodeNeedsReconciliation Code = "needs-reconciliation"
	// CodeCheckpointWriteFailed: a durable write failed; nothing is assumed
	// about it.
	CodeCheckpointWriteFailed Code = "checkpoint-write-failed"
	// CodeAdmissionUnavailable: the store has no admission seam, so dispatch
	// is refused.
	CodeAdmissionUnavailable Code = "admission-unavailable"
	// CodeUnknownEffect: an effect identity the host did not authorize when
	// the turn started.
	CodeUnknownEffect Code = "unknown-effect"
	// CodeInvalidTurn: a turn or effect reference, effect list or end status
	// that breaks the rules of recovery (an empty or over-long id, a
	// duplicated effect id, an end status that is not terminal).
	CodeInvalidTurn Code = "invalid-turn"
	// CodeStoreUnavailable: the host supplied no store or replay source for
	// the operation, or one failed a read; nothing was written.
	CodeStoreUnavailable Code = "store-unavailable"
	// CodeInvalidInput: an id or value that no store can hold as sent (a NUL
	// character, invalid UTF-8, a JSON string escaping U+0000); refused
	// before any store is asked, so a retry never helps.
	CodeInvalidInput Code = "invalid-input"

	// Codes of sse/ (docs/contract.md section 10).
	// CodeInvalidFrame: an SSE frame the encoder will not write because a
	// field would break out of its line: a CR or LF in an id or event name,
	// or a NUL in an id (docs/contract.md section 10).
	CodeInvalidFrame Code = "invalid-frame"

	// Codes of interactions/ (docs/contract.md section 13). The resolver also
	// returns [CodeUnauthorized], [CodeNeedsReconciliation],
	// [CodeCheckpointWriteFailed], [CodeStoreUnavailable],
	// [CodeUnsupportedVersion], [CodeInvalidCard] and [CodeFrameTooLarge].
	// CodeCardNotFound: no card under the key, or a card bound to another
	// conversation, principal, tenant, customer or public owner; the two are
	// indistinguishable so that a foreign caller learns nothing.
	CodeCardNotFound Code = "card-not-found"
	// CodeCardExists: a card is already open under the key.
	CodeCardExists Code = "card-exists"
	// CodeDuplicateAnswer: the same submission (same id and content) was
	// already stored for the card.
	CodeDuplicateAnswer Code = "duplicate-answer"
	// CodeAlreadyAnswered: the card was already answered or declined by
	// another submission.
	CodeAlreadyAnswered Code = "already-answered"
	// CodeAnswerExpired: the card's deadline has passed.
	CodeAnswerExpired Code = "answer-expired"
	// CodeCardCancelled: the card was cancelled.
	CodeCardCancelled Code = "card-cancelled"
	// CodeCardSuperseded: the card was replaced by another card.
	CodeCardSuperseded Code = "card-superseded"
	// CodeStaleRevision: the card's revision moved since the answer was
	// read or validated.
	CodeStaleRevision Code = "stale-revision"
	// CodeSchemaMismatch: the card's schema changed since the answer was
	// validated, or a schema id and revision was registered twice with
	// different content.
	CodeSchemaMismatch Code = "schema-mismatch"
	// CodeInvalidAnswer: a malformed submission, or a value its card's
	// schema refuses.
	CodeInvalidAnswer Code = "invalid-answer"
	// CodeUnknownSchema: no schema is registered under the card's schema id
	// and revision.
	CodeUnknownSchema Code = "unknown-schema"
	// CodeNotExpired: an expiry was requested before the card's deadline.
	CodeNotExpired Code = "not-expired"
	// CodeIdempotencyKeyReused: the card already holds an answer under
	// the submission's id (its Idempotency-Key) with another action or
	// value; the same id with the same content is [CodeDuplicateAnswer].
	CodeIdempotencyKeyReused Code = "idempotency-key-reused"

	// Codes of stream/, the HTTP handler of a turn's stream (docs/contract.md
	// section 14).

	// CodeInvalidCursor: a Last-Event-ID (or lastEventId) that is not the
	// decimal form of a seq from 0 to 2^53-1 (400).
	CodeInvalidCursor Code = "invalid-cursor"
	// CodeTurnNotFound: an unknown turn, a malformed turn key, or a caller
	// the host's Authorize hook denies; the three are indistinguishable (404).
	CodeTurnNotFound Code = "turn-not-found"

	// Codes of the HTTP surfaces (interactions/answerhttp, stream): a
	// request turned away before any store was asked (docs/contract.md
	// section 12.5).

	// CodeInvalidIdempotencyKey: the Idempotency-Key header is missing,
	// empty or over 256 bytes.
	CodeInvalidIdempotencyKey Code = "invalid-idempotency-key"
	// CodeUnreadableBody: reading the request body failed before its end,
	// other than by going over the size limit.
	CodeUnreadableBody Code = "unreadable-body"
	// CodeUnauthenticated: the host's session lookup found no caller.
	CodeUnauthenticated Code = "unauthenticated"
	// CodeMethodNotAllowed: a method the endpoint does not serve; the
	// answer carries an Allow header.
	CodeMethodNotAllowed Code = "method-not-allowed"
	// CodeUnsupportedMediaType: a state-changing request a cross-site
	// page could send: a Content-Type other than application/json, or none
	// without the endpoint's header (docs/contract.md section 12.6).
	CodeUnsupportedMediaType Code = "unsupported-media-type"
	// CodeInternal: an error without a code; its text goes to the log
	// only.
	CodeInternal Code = "internal"

	// Codes of conversation/ (docs/contract.md section 20).

	// CodeTurnRunning: the conversation already has a running turn, so
	// another does not start (409).
	CodeTurnRunning Code = "turn-running"
	// CodeConversationNotFound: no conversation under the id (404); the
	// HTTP surfaces answer it, and a caller the access rule refuses, as
	// turn-not-found.
	CodeConversationNotFound Code = "conversation-not-found"
	// CodeConversationExists: a conversation is already stored under the
	// id a create names (409).
	CodeConversationExists Code = "conversation-exists"
)

// The sentinels, one per code, for [errors.Is]: ErrX matches every [*Error] of
// CodeX (see the code for when it is returned).
const (
	ErrUnsupportedVersion    Sentinel = Sentinel(CodeUnsupportedVersion)
	ErrUnsupportedEvent      Sentinel = Sentinel(CodeUnsupportedEvent)
	ErrInvalidEnvelope       Sentinel = Sentinel(CodeInvalidEnvelope)
	ErrInvalidEvent          Sentinel = Sentinel(CodeInvalidEvent)
	ErrMissingCallID         Sentinel = Sentinel(CodeMissingCallID)
	ErrUnknownResultStatus   Sentinel = Sentinel(CodeUnknownResultStatus)
	ErrForeignFrame          Sentinel = Sentinel(CodeForeignFrame)
	ErrSequenceGap           Sentinel = Sentinel(CodeSequenceGap)
	ErrSequenceReordered     Sentinel = Sentinel(CodeSequenceReordered)
	ErrUnknownCall           Sentinel = Sentinel(CodeUnknownCall)
	ErrTurnTerminated        Sentinel = Sentinel(CodeTurnTerminated)
	ErrUnsupportedCapability Sentinel = Sentinel(CodeUnsupportedCapability)
	ErrFrameTooLarge         Sentinel = Sentinel(CodeFrameTooLarge)
	ErrStaleCursor           Sentinel = Sentinel(CodeStaleCursor)
	ErrCursorAhead           Sentinel = Sentinel(CodeCursorAhead)
	ErrInvalidCard           Sentinel = Sentinel(CodeInvalidCard)
	ErrTurnNotRunning        Sentinel = Sentinel(CodeTurnNotRunning)
	ErrUnauthorized          Sentinel = Sentinel(CodeUnauthorized)
	ErrClaimConflict         Sentinel = Sentinel(CodeClaimConflict)
	ErrNeedsReconciliation   Sentinel = Sentinel(CodeNeedsReconciliation)
	ErrCheckpointWriteFailed Sentinel = Sentinel(CodeCheckpointWriteFailed)
	ErrAdmissionUnavailable  Sentinel = Sentinel(CodeAdmissionUnavailable)
	ErrUnknownEffect         Sentinel = Sentinel(CodeUnknownEffect)
	ErrInvalidTurn           Sentinel = Sentinel(CodeInvalidTurn)
	ErrStoreUnavailable      Sentinel = Sentinel(CodeStoreUnavailable)
	ErrInvalidInput          Sentinel = Sentinel(CodeInvalidInput)
	ErrInvalidFrame          Sentinel = Sentinel(CodeInvalidFrame)
	ErrCardNotFound          Sentinel = Sentinel(CodeCardNotFound)
	ErrCardExists            Sentinel = Sentinel(CodeCardExists)
	ErrDuplicateAnswer       Sentinel = Sentinel(CodeDuplicateAnswer)
	ErrAlreadyAnswered       Sentinel = Sentinel(CodeAlreadyAnswered)
	ErrAnswerExpired         Sentinel = Sentinel(CodeAnswerExpired)
	ErrCardCancelled         Sentinel = Sentinel(CodeCardCancelled)
	ErrCardSuperseded        Sentinel = Sentinel(CodeCardSuperseded)
	ErrStaleRevision         Sentinel = Sentinel(CodeStaleRevision)
	ErrSchemaMismatch        Sentinel = Sentinel(CodeSchemaMismatch)
	ErrInvalidAnswer         Sentinel = Sentinel(CodeInvalidAnswer)
	ErrUnknownSchema         Sentinel = Sentinel(CodeUnknownSchema)
	ErrNotExpired            Sentinel = Sentinel(CodeNotExpired)
	ErrIdempotencyKeyReused  Sentinel = Sentinel(CodeIdempotencyKeyReused)
	ErrInvalidCursor         Sentinel = Sentinel(CodeInvalidCursor)
	ErrTurnNotFound          Sentinel = Sentinel(CodeTurnNotFound)
	ErrInvalidIdempotencyKey Sentinel = Sentinel(CodeInvalidIdempotencyKey)
	ErrUnreadableBody        Sentinel = Sentinel(CodeUnreadableBody)
	ErrUnauthenticated       Sentinel = Sentinel(CodeUnauthenticated)
	ErrMethodNotAllowed      Sentinel = Sentinel(CodeMethodNotAllowed)
	ErrUnsupportedMediaType  Sentinel = Sentinel(CodeUnsupportedMediaType)
	ErrInternal              Sentinel = Sentinel(CodeInternal)
	ErrTurnRunning           Sentinel = Sentinel(CodeTurnRunning)
	ErrConversationNotFound  Sentinel = Sentinel(CodeConversationNotFound)
	ErrConversationExists    Sentinel = Sentinel(CodeConversationExists)
)

// Codes returns every code of the module in a fixed order; the slice is new
// on each call.
func Codes() []Code {
	return []Code{
		CodeUnsupportedVersion,
		CodeUnsupportedEvent,
		CodeInvalidEnvelope,
		CodeInvalidEvent,
		CodeMissingCallID,
		CodeUnknownResultStatus,
		CodeForeignFrame,
		CodeSequenceGap,
		CodeSequenceReordered,
		CodeUnknownCall,
		CodeTurnTerminated,
		CodeUnsupportedCapability,
		CodeFrameTooLarge,
		CodeStaleCursor,
		CodeCursorAhead,
		CodeInvalidCard,
		CodeTurnNotRunning,
		CodeUnauthorized,
		CodeClaimConflict,
		CodeNeedsReconciliation,
		CodeCheckpointWriteFailed,
		CodeAdmissionUnavailable,
		CodeUnknownEffect,
		CodeInvalidTurn,
		CodeStoreUnavailable,
		CodeInvalidInput,
		CodeInvalidFrame,
		CodeCardNotFound,
		CodeCardExists,
		CodeDuplicateAnswer,
		CodeAlreadyAnswered,
		CodeAnswerExpired,
		CodeCardCancelled,
		CodeCardSuperseded,
		CodeStaleRevision,
		CodeSchemaMismatch,
		CodeInvalidAnswer,
		CodeUnknownSchema,
		CodeNotExpired,
		CodeIdempotencyKeyReused,
		CodeInvalidCursor,
		CodeTurnNotFound,
		CodeInvalidIdempotencyKey,
		CodeUnreadableBody,
		CodeUnauthenticated,
		CodeMethodNotAllowed,
		CodeUnsupportedMediaType,
		CodeInternal,
		CodeTurnRunning,
		CodeConversationNotFound,
		CodeConversationExists,
	}
}
