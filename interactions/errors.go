package interactions

import "github.com/Papercusp/chat-protocol-go/internal/wire"

// Error is the module's one refusal type (contract-v1.md section 12): a
// stable Code, a JSON-pointer Path where one applies, a Message for people
// only and an optional wrapped cause. It is the same type as
// chatprotocol.Error. Branch with errors.Is against the sentinels below, with
// errors.AsType[*Error] or with CodeOf, never on message text.
type Error = wire.Error

// Code is the stable name of a refusal (contract-v1.md section 12).
type Code = wire.Code

// The codes a Resolver returns (contract-v1.md section 13, seed 000); see
// the sentinel of each for when.
const (
	CodeCardNotFound          = wire.CodeCardNotFound
	CodeCardExists            = wire.CodeCardExists
	CodeDuplicateAnswer       = wire.CodeDuplicateAnswer
	CodeAlreadyAnswered       = wire.CodeAlreadyAnswered
	CodeAnswerExpired         = wire.CodeAnswerExpired
	CodeCardCancelled         = wire.CodeCardCancelled
	CodeCardSuperseded        = wire.CodeCardSuperseded
	CodeStaleRevision         = wire.CodeStaleRevision
	CodeSchemaMismatch        = wire.CodeSchemaMismatch
	CodeInvalidAnswer         = wire.CodeInvalidAnswer
	CodeUnknownSchema         = wire.CodeUnknownSchema
	CodeNotExpired            = wire.CodeNotExpired
	CodeStoreUnavailable      = wire.CodeStoreUnavailable
	CodeUnauthorized          = wire.CodeUnauthorized
	CodeNeedsReconciliation   = wire.CodeNeedsReconciliation
	CodeCheckpointWriteFailed = wire.CodeCheckpointWriteFailed
	CodeUnsupportedVersion    = wire.CodeUnsupportedVersion
	CodeInvalidCard           = wire.CodeInvalidCard
	CodeFrameTooLarge         = wire.CodeFrameTooLarge
)

// Sentinels for errors.Is, one per code a Resolver returns. Each is an
// *Error carrying only its Code; errors.Is matches any *Error of that code.
var (
	// ErrCardNotFound: no card under the key, or a card bound to another
	// conversation, principal, tenant, customer or public owner. The two
	// cases carry the same message so that a foreign caller cannot tell
	// whether the card exists (seed 000: "rendered content and submitted
	// fields never grant authority").
	ErrCardNotFound = wire.Sentinel(CodeCardNotFound)
	// ErrCardExists: Open found a card already stored under the key.
	ErrCardExists = wire.Sentinel(CodeCardExists)
	// ErrDuplicateAnswer: the same submission (same id, action and value)
	// is already stored for the card; Answer returns the stored Result with
	// it.
	ErrDuplicateAnswer = wire.Sentinel(CodeDuplicateAnswer)
	// ErrAlreadyAnswered: another submission already answered or declined
	// the card.
	ErrAlreadyAnswered = wire.Sentinel(CodeAlreadyAnswered)
	// ErrAnswerExpired: the card's deadline (CreatedAt + TimeoutMs) has
	// passed, whether or not the expiry was stored yet.
	ErrAnswerExpired = wire.Sentinel(CodeAnswerExpired)
	// ErrCardCancelled: the card was cancelled, by the backend or by the
	// person's own cancel response.
	ErrCardCancelled = wire.Sentinel(CodeCardCancelled)
	// ErrCardSuperseded: the card was replaced by another card.
	ErrCardSuperseded = wire.Sentinel(CodeCardSuperseded)
	// ErrStaleRevision: the card's revision moved after the answer was read
	// and validated, or differs from the revision the submission names.
	ErrStaleRevision = wire.Sentinel(CodeStaleRevision)
	// ErrSchemaMismatch: the card's schema id or revision changed after the
	// answer was validated (seed 000: "the final transaction rechecks the
	// validated revision and schema").
	ErrSchemaMismatch = wire.Sentinel(CodeSchemaMismatch)
	// ErrInvalidAnswer: a malformed submission (empty id, unknown action, a
	// correlation id other than the key's, a decline the card does not
	// allow, a submit whose value is not a JSON object) or a value the
	// card's schema refuses.
	ErrInvalidAnswer = wire.Sentinel(CodeInvalidAnswer)
	// ErrUnknownSchema: the Validator has no schema under the card's schema
	// id and revision; the answer is refused rather than accepted unchecked.
	ErrUnknownSchema = wire.Sentinel(CodeUnknownSchema)
	// ErrNotExpired: Expire was called before the card's deadline.
	ErrNotExpired = wire.Sentinel(CodeNotExpired)
	// ErrStoreUnavailable: Store.Read failed; nothing was written and the
	// request may be repeated.
	ErrStoreUnavailable = wire.Sentinel(CodeStoreUnavailable)
	// ErrUnauthorized: the caller has no current authorization (unknown,
	// revoked or suspended), or the store's current view of the caller
	// differs from the identity the host authenticated.
	ErrUnauthorized = wire.Sentinel(CodeUnauthorized)
	// ErrNeedsReconciliation: a write's acknowledgement was lost and the one
	// read that follows did not find this call's change stored; the outcome
	// is unknown and the host must reconcile (seed 000).
	ErrNeedsReconciliation = wire.Sentinel(CodeNeedsReconciliation)
	// ErrCheckpointWriteFailed: the store reports that nothing was
	// committed. A Store returns an error of this code only when it knows
	// nothing was written.
	ErrCheckpointWriteFailed = wire.Sentinel(CodeCheckpointWriteFailed)
	// ErrUnsupportedVersion: a stored record whose Version is not 1.
	ErrUnsupportedVersion = wire.Sentinel(CodeUnsupportedVersion)
	// ErrInvalidCard: Open, Revise or Supersede was given a key, scope, spec
	// or schema reference that breaks the rules of Record.
	ErrInvalidCard = wire.Sentinel(CodeInvalidCard)
	// ErrFrameTooLarge: a submitted value over Options.MaxValueBytes.
	ErrFrameTooLarge = wire.Sentinel(CodeFrameTooLarge)
)

// CodeOf returns the Code of the first *Error in err's chain, or "" when
// err is nil or carries none.
func CodeOf(err error) Code { return wire.CodeOf(err) }
