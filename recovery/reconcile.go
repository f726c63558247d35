package recovery

import "context"

// reconcileAttempts bounds how often Reconcile retries a lost
// compare-and-swap before returning ErrClaimConflict.
const reconcileAttempts = 4

// Reconcile stores a result the host verified through its own effect or
// idempotency lookup, for an effect whose outcome was unknown (seed 000:
// persist verified results through the same CAS seam). It authorizes caller
// for ActionReconcile and completes the effect with a compare-and-swap from
// whatever non-terminal state it is in, also in a cancelled or finished
// turn (the turn is not reopened). A claim or admission still pending for
// the effect then fails its revision check, so nothing launches afterwards.
//
// If the effect is already completed, Reconcile changes nothing and returns
// the stored result, which may differ from verified: terminal records never
// change and the stored result wins. Otherwise it returns verified once
// stored. Errors: ErrInvalidTurn, ErrUnauthorized, ErrStoreUnavailable,
// ErrTurnNotRunning for a turn never started, ErrUnknownEffect,
// ErrClaimConflict after repeated lost swaps, ErrCheckpointWriteFailed, and
// ErrNeedsReconciliation when the acknowledgement was lost and one read did
// not show a stored result.
func (r *TurnRecovery) Reconcile(ctx context.Context, caller string, effect EffectRef, verified Result) (Result, error) {
	if err := effect.Validate(); err != nil {
		return Result{}, err
	}
	st, err := r.begin(ctx, caller, effect.Turn, ActionReconcile)
	if err != nil {
		return Result{}, err
	}
	for attempt := 1; ; attempt++ {
		_, eff, err := loadEffect(ctx, st, effect)
		if err != nil {
			return Result{}, err
		}
		if eff.State == EffectCompleted {
			return eff.Result, nil
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
		if CodeOf(err) != CodeClaimConflict || attempt == reconcileAttempts {
			return Result{}, err
		}
	}
}
