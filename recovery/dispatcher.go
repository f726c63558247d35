package recovery

import (
	"context"
	"time"
)

// Dispatcher is an optional seam of a Store that is also an Admitter: it
// lets [TurnRecovery.Execute] run its normal path (the effect not yet
// claimed, the launch succeeds) in three round trips to a networked store
// instead of six: the claim together with its read (and, if the store
// wants, the request for the fence), the admission under the fence, and the
// completion together with the fence's release (docs/contract.md section
// 13). Execute uses it whenever the Store implements it; Reconcile and the
// other operations do not. Every guarantee of Store and Admitter holds
// unchanged.
type Dispatcher interface {
	// ClaimEffect reads c.Effect and its turn in one atomic step and, if
	// the turn is running and the effect is pending, or claimed under a
	// lease that ended (its LeaseUntil is not after c.Now), claims it: its
	// revision advances by one, its state becomes claimed, its holder
	// c.Holder and its lease c.LeaseUntil, atomically with respect to every
	// other write of the effect, as CompareAndSwapEffect is.
	//
	// It returns the turn's status and, in [ClaimResult.Record], the effect as it
	// now stands: the claim written, or the record read when nothing was
	// written. When the claim was written, [ClaimResult.Fence] is the admission
	// fence of the turn for this claim (the caller Closes it); otherwise it
	// is nil. Errors: [refusal.ErrTurnNotRunning] for a turn that does not exist,
	// [refusal.ErrUnknownEffect] for an effect the turn does not have,
	// [refusal.ErrStoreUnavailable] when a read failed and nothing was written,
	// [refusal.ErrClaimConflict] when a concurrent write of the effect won, and the
	// write errors of CompareAndSwapEffect ([refusal.ErrCheckpointWriteFailed]: not
	// claimed; [refusal.ErrNeedsReconciliation]: the claim may have been written).
	ClaimEffect(ctx context.Context, c Claim) (ClaimResult, error)
}

// Claim is what [Dispatcher.ClaimEffect] claims: Effect for Holder until
// LeaseUntil (microsecond precision), taking over a claim whose lease ended
// at or before Now.
type Claim struct {
	Effect     EffectRef
	Holder     string
	LeaseUntil time.Time
	Now        time.Time
}

// ClaimResult is the answer of [Dispatcher.ClaimEffect]: the turn's status, the
// effect's record and, when the claim was written, the turn's admission
// fence for it.
type ClaimResult struct {
	Status TurnStatus
	Record EffectRecord
	Fence  DispatchFence
}

// DispatchFence is the admission fence of one claimed effect's turn, handed
// out by [Dispatcher.ClaimEffect]. It is used by one goroutine at a time.
type DispatchFence interface {
	// AdmitDispatch is [Admitter.AdmitDispatch] for the claim, holding this
	// fence, steps 1 to 4 alike (Authorize, the checks, the durable
	// admission mark, then launch exactly once). Step 5 may be deferred:
	// the fence may stay held after it returns, but only until Complete or
	// Close is called, or a short, bounded time has passed (the store
	// releases it then by itself), so that a cancellation never waits for
	// the execution. It is called at most once; on an error the fence, and
	// whatever it holds, is released before it returns.
	AdmitDispatch(ctx context.Context, adm Admission, launch DispatchFunc) error

	// Complete is [Store.CompareAndSwapEffect] for the admitted effect (its
	// result, or the mark that its outcome is unknown), releasing the fence
	// first if it is still held; a store may send both in one round trip.
	// While the fence may still be held (AdmitDispatch returned nil),
	// Execute calls nothing else of the store before Complete: a fence
	// holding a pooled connection never waits for a second one.
	// Errors are CompareAndSwapEffect's.
	Complete(ctx context.Context, expected uint64, next EffectRecord) error

	// Close releases the fence, if it is still held, and whatever the
	// fence holds (a connection). It is idempotent, and always called.
	Close(ctx context.Context)
}
