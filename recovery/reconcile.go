package recovery

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// reconcileAttempts bounds how often Reconcile retries a lost
// compare-and-swap before returning ErrClaimConflict.
const reconcileAttempts = 4

// VerifyFunc is the host's lookup of an effect's real outcome in its own
// effect or idempotency records (docs/contract.md section 13.1), for example
// a query of the external system by the effect's idempotency key. It returns
// the verified Result (which may record that the effect was never performed),
// or an error when the outcome cannot be verified yet. Reconcile may call it
// more than once, and calls it only when no launch of the effect can be in
// progress.
type VerifyFunc func(ctx context.Context, effect EffectRef) (Result, error)

// Reconcile stores the host-verified outcome of an effect whose outcome was
// unknown, through the same compare-and-swap seam (docs/contract.md section
// 13.1). It authorizes caller for [ActionReconcile], reads the effect and:
//
//   - completed: returns the stored result, changing nothing (terminal
//     records never change; the stored result wins);
//   - admitted under a live lease: refuses with [refusal.ErrClaimConflict], the effect
//     is in flight under another worker (a [*LeaseError]: retry after Until);
//   - admitted after its lease: first passes the admission fence (an
//     AdmitDispatch the store must refuse, see Admitter), so that a worker
//     paused inside launch has returned before the lookup;
//   - then calls verify and completes the effect with its result, from
//     whatever non-terminal state it is in, also in a cancelled or finished
//     turn (the turn is not reopened). A claim or admission still pending
//     then fails its revision check: nothing launches afterwards.
//
// It returns the stored result. Errors: [refusal.ErrInvalidTurn], [refusal.ErrUnauthorized],
// [refusal.ErrStoreUnavailable], [refusal.ErrTurnNotRunning] for a turn never started,
// [refusal.ErrUnknownEffect], [refusal.ErrAdmissionUnavailable] for an admitted effect when the
// Store has no Admitter, [refusal.ErrClaimConflict] (in flight, or after repeated
// lost swaps), [refusal.ErrCheckpointWriteFailed], and [refusal.ErrNeedsReconciliation] when
// verify failed, or the acknowledgement was lost and one read did not show
// a stored result.
func (r *TurnRecovery) Reconcile(ctx context.Context, caller string, effect EffectRef, verify VerifyFunc) (_ Result, err error) {
	defer func() { r.reportEffect(ctx, observe.EffectReconcile, effect, err) }()
	st, err := r.beginEffect(ctx, caller, effect, ActionReconcile, verify != nil, "verify function")
	if err != nil {
		return Result{}, err
	}
	for attempt := 1; ; attempt++ {
		_, eff, err := loadEffect(ctx, st, effect)
		if err != nil {
			return Result{}, err
		}
		if eff.State == EffectAdmitted {
			if r.now().Before(eff.LeaseUntil) {
				return Result{}, leaseConflict("effect in flight under another worker: await its result or its lease", eff.LeaseUntil)
			}
			if err := r.barrier(ctx, caller, st, effect, eff); err != nil {
				return Result{}, err
			}
			if _, eff, err = loadEffect(ctx, st, effect); err != nil {
				return Result{}, err
			}
		}
		if eff.State == EffectCompleted {
			return eff.Result, nil
		}
		verified, err := verify(ctx, effect)
		if err != nil {
			return Result{}, needsReconciliation("the host could not verify the outcome", err)
		}
		next := eff.Clone()
		next.State = EffectCompleted
		next.Revision = eff.Revision + 1
		next.Result = Result{Data: append([]byte(nil), verified.Data...)}
		next.Reconciled = true
		err = st.CompareAndSwapEffect(ctx, effect.Turn, eff.Revision, next.Clone())
		switch classifyWrite(err) {
		case writeApplied:
			return next.Result, nil
		case writeNotApplied:
			return Result{}, err
		case writeUncertain:
			if stored, ok := storedResult(ctx, st, effect); ok {
				return stored, nil
			}
			return Result{}, needsReconciliation("reconcile acknowledgement lost", err)
		}
		if refusal.CodeOf(err) != refusal.CodeClaimConflict || attempt == reconcileAttempts {
			return Result{}, err
		}
	}
}

var errBarrierLaunch = errors.New("recovery: the reconciliation barrier never launches")

// barrier passes the admission fence of the effect's turn with an
// AdmitDispatch the store must refuse (the effect is admitted, not
// claimed): when it returns, any launch that was in progress has returned,
// and no other can start for this admission.
func (r *TurnRecovery) barrier(ctx context.Context, caller string, st Store, effect EffectRef, eff EffectRecord) error {
	adm, ok := st.(Admitter)
	if !ok {
		return refusal.New(refusal.CodeAdmissionUnavailable, "", "an admitted effect needs the admission fence to be reconciled")
	}
	var launched atomic.Bool
	err := adm.AdmitDispatch(ctx, r.admission(caller, effect, eff, ActionReconcile, nil), func(context.Context) error {
		launched.Store(true)
		return errBarrierLaunch
	})
	switch {
	case launched.Load():
		return needsReconciliation("the store admitted an effect that was not claimed", nil)
	case refusal.CodeOf(err) == refusal.CodeClaimConflict, refusal.CodeOf(err) == refusal.CodeTurnNotRunning:
		return nil
	case classifyWrite(err) == writeRefused, classifyWrite(err) == writeNotApplied:
		return err
	}
	return needsReconciliation("the admission fence did not answer", err)
}
