package recovery

import "context"

// Store is the host's existing session store, seen through the
// compare-and-swap seam recovery needs (docs/contract.md section 13.1). Every
// method must be safe for concurrent use by many goroutines and many
// processes sharing the same database, and must return records that do not
// share memory with the stored state.
//
// Errors. An implementation reports:
//   - a lost compare-and-swap, or CreateTurn of a turn that exists: an error
//     matching [refusal.ErrClaimConflict];
//   - a turn that does not exist, or EndTurn of a turn that is no longer
//     running: an error matching [refusal.ErrTurnNotRunning];
//   - a write known not to have been applied (the transaction rolled back,
//     or failed before COMMIT was sent): an error matching
//     [refusal.ErrCheckpointWriteFailed], wrapping the cause;
//   - a write that may or may not have been applied (the connection broke
//     during COMMIT, the acknowledgement was lost, the context ended while
//     committing): an error matching [refusal.ErrNeedsReconciliation], wrapping the
//     cause. Never nil: a lost acknowledgement is not a success.
//
// Any other error from a write is treated as "may have been applied"; any
// error from a read as "nothing is known". See the package documentation for
// a PostgreSQL recipe.
type Store interface {
	// CreateTurn durably stores rec, a running turn whose effects are all
	// pending at revision 1, if no turn with rec.Turn exists. It returns an
	// error matching [refusal.ErrClaimConflict] when one does, whatever its content.
	CreateTurn(ctx context.Context, rec TurnRecord) error

	// LoadTurn returns the committed record of turn, read in one consistent
	// snapshot, or an error matching [refusal.ErrTurnNotRunning] when there is none.
	LoadTurn(ctx context.Context, turn TurnRef) (TurnRecord, error)

	// CompareAndSwapEffect replaces the record of effect next.ID of turn
	// with next if, and only if, that record's Revision is still expected;
	// next.Revision is always expected+1. It returns an error matching
	// [refusal.ErrClaimConflict] when the revision moved or the turn has no such
	// effect, and [refusal.ErrTurnNotRunning] when the turn does not exist. It does
	// not look at the turn's status (a completion after cancellation must
	// succeed) and need not take the admission fence; it must be atomic
	// with respect to every other write of the same effect, including the
	// admission mark of [Admitter.AdmitDispatch]. Writes of different effects
	// of one turn must not conflict with each other.
	CompareAndSwapEffect(ctx context.Context, turn TurnRef, expected uint64, next EffectRecord) error

	// EndTurn durably moves a running turn to status (completed, failed or
	// cancelled) under the same fence as [Admitter.AdmitDispatch], so that it
	// waits for an admission in progress, launch included, and no admission
	// starts until it is done. It returns the record as committed, whose
	// admitted effects are the in-flight ones the abort hook must reach. A
	// turn that is not running gives an error matching [refusal.ErrTurnNotRunning] and
	// is left unchanged.
	EndTurn(ctx context.Context, turn TurnRef, status TurnStatus) (TurnRecord, error)
}

// Admitter is the admission seam (docs/contract.md section 13.1, the
// admission fence). A Store that does not implement it makes
// [TurnRecovery.Execute] refuse dispatch with [refusal.ErrAdmissionUnavailable].
// Implementations must be safe for concurrent use.
type Admitter interface {
	// AdmitDispatch admits one effect for dispatch. Holding the fence it
	// shares with [Store.EndTurn] for the turn, it must, in this order:
	//
	//  1. call adm.Authorize(ctx) and, if it fails, return that error;
	//  2. check that the turn is running (else an error matching
	//     [refusal.ErrTurnNotRunning]) and that the effect is claimed by adm.Holder at
	//     revision adm.Revision (else [refusal.ErrClaimConflict]);
	//  3. durably mark the effect admitted at revision adm.Revision+1, with
	//     a compare-and-swap on adm.Revision, and know that the mark
	//     committed (a write failure gives [refusal.ErrCheckpointWriteFailed], a lost
	//     acknowledgement [refusal.ErrNeedsReconciliation]; launch is then not called);
	//  4. call launch exactly once, still holding the fence;
	//  5. release the fence and return launch's error, or nil.
	//
	// launch starts the host-owned execution and returns quickly; its
	// result is awaited outside the fence. AdmitDispatch never calls launch
	// in any other case, never twice, and never after it has returned.
	//
	// [TurnRecovery.Reconcile] also calls AdmitDispatch, for an effect that
	// is admitted rather than claimed, as a barrier: since the refusal of
	// step 2 comes after the fence is taken, the call returns only after
	// any launch in progress on the turn returned.
	AdmitDispatch(ctx context.Context, adm Admission, launch DispatchFunc) error
}

// Admission is what AdmitDispatch revalidates under the fence.
//
// Effect is the effect to admit; Revision and Holder are those of the claim
// the caller committed (the effect's record must still carry both).
// Authorize rechecks the caller's current authority; it is never nil, it
// may block on the host's authorization store, and the ctx it receives is
// the one AdmitDispatch passes (an implementation may attach its
// transaction to it for the host's authorizer to use).
type Admission struct {
	Effect    EffectRef
	Revision  uint64
	Holder    string
	Authorize func(ctx context.Context) error
}

// DispatchFunc starts one admitted effect. AdmitDispatch calls it exactly once,
// under the fence, after the admission mark committed; ctx is the one
// AdmitDispatch received and is only for the launch call itself.
type DispatchFunc func(ctx context.Context) error
