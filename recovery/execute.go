package recovery

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Execute runs one authorized effect at most once and returns its result
// (docs/contract.md section 13.1). caller is the host's principal id.
//
// A completed effect returns its stored result without launching. Otherwise
// Execute claims the effect by compare-and-swap, and the Store's
// [Admitter.AdmitDispatch] revalidates caller, the running turn and the
// claim under the fence it shares with cancellation, marks admission and
// calls l.Launch exactly once; Execute waits for the execution outside the
// fence and stores its result by compare-and-swap. A [Dispatcher] store
// does the read and the claim in one call. A store whose AdmitDispatch skips
// the Authorize it was handed gets no launch ([ErrAuthorizeSkipped]).
//
// Errors ([refusal.CodeOf] reads the code): [refusal.ErrInvalidTurn],
// [refusal.ErrInvalidInput], [refusal.ErrUnauthorized],
// [refusal.ErrStoreUnavailable], [refusal.ErrUnknownEffect],
// [refusal.ErrTurnNotRunning] and [refusal.ErrAdmissionUnavailable] (nothing
// launched); [refusal.ErrClaimConflict] (another worker's live claim, then a
// [*LeaseError] saying when it ends, or a lost claim);
// [refusal.ErrCheckpointWriteFailed] (a write known not applied; after the
// launch the host reconciles); [refusal.ErrNeedsReconciliation] (the outcome
// is unknown, on this and every later call: the host reconciles, never a
// relaunch). Every result returned with a nil error is the stored one.
func (r *TurnRecovery) Execute(ctx context.Context, caller string, effect EffectRef, l Launcher) (_ Result, err error) {
	rep := effectReport{obs: r.obs, effect: effect}
	defer func() { rep.end(ctx, err) }()
	st, err := r.beginEffect(ctx, caller, effect, ActionExecute, l != nil, "launcher")
	if err != nil {
		return Result{}, err
	}
	adm, isAdmitter := st.(Admitter)
	if d, ok := st.(Dispatcher); ok && isAdmitter {
		return r.executeClaiming(ctx, caller, st, d, effect, l, &rep)
	}
	rec, eff, err := loadEffect(ctx, st, effect)
	if err != nil {
		return Result{}, err
	}
	now := r.now()
	if res, err, done := settled(now, rec.Status, eff); done {
		return res, err
	}
	if !isAdmitter {
		return Result{}, refusal.New(refusal.CodeAdmissionUnavailable, "", "the store has no admission seam: dispatch refused")
	}
	ctx = rep.claim(ctx)
	claim := EffectRecord{
		ID:         eff.ID,
		Revision:   eff.Revision + 1,
		State:      EffectClaimed,
		Holder:     r.holder(),
		LeaseUntil: r.leaseFrom(now),
	}
	err = st.CompareAndSwapEffect(ctx, effect.Turn, eff.Revision, claim.Clone())
	if res, err, done := claimOutcome(ctx, st, effect, err); done {
		return res, err
	}
	swap := func(ctx context.Context, expected uint64, next EffectRecord) error {
		return st.CompareAndSwapEffect(ctx, effect.Turn, expected, next)
	}
	return r.dispatch(ctx, caller, st, effect, claim, l, adm.AdmitDispatch, swap, &rep)
}

// claimOutcome settles Execute after a claim write that did not surely
// apply: a refusal is read again as a conflict, a write known not applied
// returns as it is, and an uncertain one needs reconciliation. done is false
// when the claim applied.
func claimOutcome(ctx context.Context, st Store, effect EffectRef, err error) (Result, error, bool) {
	switch classifyWrite(err) {
	case writeRefused:
		res, err := afterConflict(ctx, st, effect, err)
		return res, err, true
	case writeNotApplied:
		return Result{}, err, true
	case writeUncertain:
		return Result{}, needsReconciliation("claim acknowledgement lost", err), true
	}
	return Result{}, nil, false
}

// executeClaiming is Execute over a Dispatcher: the claim with its read in
// one call, then the admission and the completion through the fence it
// hands out.
func (r *TurnRecovery) executeClaiming(ctx context.Context, caller string, st Store, d Dispatcher, effect EffectRef, l Launcher, rep *effectReport) (Result, error) {
	now := r.now()
	c, err := d.ClaimEffect(ctx, Claim{Effect: effect, Holder: r.holder(), LeaseUntil: r.leaseFrom(now), Now: now})
	if c.Fence != nil {
		defer c.Fence.Close(context.WithoutCancel(ctx))
	}
	if res, err, done := claimOutcome(ctx, st, effect, err); done {
		return res, err
	}
	if c.Fence == nil {
		if res, err, done := settled(now, c.Status, c.Record); done {
			return res, err
		}
		// Claimable, running, and yet not claimed: a concurrent write won.
		return afterConflict(ctx, st, effect, refusal.New(refusal.CodeClaimConflict, "", "another worker won the claim"))
	}
	if c.Record.State != EffectClaimed || c.Record.ID != effect.Effect {
		return Result{}, needsReconciliation("the store reported a claim it did not write", nil)
	}
	ctx = rep.claim(ctx) // claimed: the read and the claim were one call
	return r.dispatch(ctx, caller, st, effect, c.Record.Clone(), l, c.Fence.AdmitDispatch, c.Fence.Complete, rep)
}

// leaseFrom is the end of a claim made at now, at the precision
// timestamptz keeps.
func (r *TurnRecovery) leaseFrom(now time.Time) time.Time {
	return now.Add(r.lease).Truncate(time.Microsecond)
}

// settled answers an Execute from the effect's record as read at now, when
// the record alone decides: a stored result, an unknown outcome, a live
// lease of another holder (a *LeaseError), or a turn that is not running.
// done is false when the effect may be claimed.
func settled(now time.Time, status TurnStatus, eff EffectRecord) (res Result, err error, done bool) {
	switch eff.State {
	case EffectCompleted:
		return eff.Result, nil, true
	case EffectNeedsReconciliation:
		return Result{}, needsReconciliation("effect outcome unknown: reconcile it", nil), true
	case EffectAdmitted:
		if now.Before(eff.LeaseUntil) {
			return Result{}, leaseConflict("effect in flight under another worker", eff.LeaseUntil), true
		}
		return Result{}, needsReconciliation("effect admitted earlier without a stored result", nil), true
	case EffectClaimed:
		if now.Before(eff.LeaseUntil) {
			return Result{}, leaseConflict("effect claimed by another worker", eff.LeaseUntil), true
		}
	}
	if status != TurnRunning {
		return Result{}, refusal.New(refusal.CodeTurnNotRunning, "", "turn is "+string(status)), true
	}
	return Result{}, nil, false
}

// admitFunc is Admitter.AdmitDispatch or DispatchFence.AdmitDispatch.
type admitFunc func(ctx context.Context, adm Admission, launch DispatchFunc) error

// swapFunc is Store.CompareAndSwapEffect for the effect's turn, or
// DispatchFence.Complete.
type swapFunc func(ctx context.Context, expected uint64, next EffectRecord) error

// admission is what AdmitDispatch revalidates for rec, the effect's record
// as the caller last wrote or read it: its revision, its holder and the
// caller's current authority for action.
//
// authorized, when not nil, is set once Authorize returned nil: the
// launch callback checks it, so that a store whose AdmitDispatch skips
// the authorization cannot launch anything (defence in depth at the
// fence).
func (r *TurnRecovery) admission(caller string, effect EffectRef, rec EffectRecord, action Action, authorized *atomic.Bool) Admission {
	return Admission{
		Effect:   effect,
		Revision: rec.Revision,
		Holder:   rec.Holder,
		Authorize: func(ctx context.Context) error {
			err := r.authorize(ctx, caller, effect.Turn, action)
			if err == nil && authorized != nil {
				authorized.Store(true)
			}
			return err
		},
	}
}

// launchOnce is the callback Execute gives AdmitDispatch: it calls the
// host's Launcher at most once, and never after AdmitDispatch returned, even
// if a faulty store calls it again or late.
type launchOnce struct {
	// authorized is set by the Admission's Authorize when it allowed.
	authorized atomic.Bool
	mu         sync.Mutex
	called     bool
	closed     bool
	// unauthorized records a launch the store asked for without having
	// called Authorize (or after it refused).
	unauthorized bool
	exec         Execution
	err          error
	launcher     Launcher
	effect       EffectRef
}

var (
	errLaunchRefused = errors.New("recovery: launch called twice or after AdmitDispatch returned")
	// ErrAuthorizeSkipped is wrapped by the needs-reconciliation refusal
	// Execute returns when the Store's AdmitDispatch asked for the launch
	// without having called [Admission.Authorize] (or after it refused): a
	// broken store. Nothing was launched; the effect may be marked
	// admitted, so the host reconciles it (its lookup finds it never ran).
	ErrAuthorizeSkipped = errors.New("recovery: the store's AdmitDispatch asked for a launch without a successful Authorize: launch refused")
)

func (o *launchOnce) launch(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.called || o.closed {
		return errLaunchRefused
	}
	if !o.authorized.Load() {
		o.unauthorized = true
		return ErrAuthorizeSkipped
	}
	o.called = true
	o.exec, o.err = o.launcher.Launch(ctx, o.effect)
	if o.err == nil && o.exec == nil {
		o.err = errors.New("recovery: launcher returned no execution")
	}
	return o.err
}

// close stops further launches and reports what happened.
func (o *launchOnce) close() (called, unauthorized bool, exec Execution, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	return o.called, o.unauthorized, o.exec, o.err
}

// dispatch admits the claimed effect through admit, awaits it and stores
// its result through swap.
func (r *TurnRecovery) dispatch(ctx context.Context, caller string, st Store, effect EffectRef, claim EffectRecord, l Launcher, admit admitFunc, swap swapFunc, rep *effectReport) (Result, error) {
	once := &launchOnce{launcher: l, effect: effect}
	err := admit(ctx, r.admission(caller, effect, claim, ActionExecute, &once.authorized), once.launch)
	launched, unauthorized, exec, launchErr := once.close()
	if launched { // the store committed the admission before it let the launch run
		rep.point(observe.EffectAdmit)
		if launchErr == nil {
			rep.point(observe.EffectLaunch)
		}
	}
	if unauthorized {
		return Result{}, needsReconciliation("broken store", ErrAuthorizeSkipped)
	}
	if !launched {
		switch classifyWrite(err) {
		case writeRefused:
			return afterConflict(ctx, st, effect, err)
		case writeNotApplied:
			return Result{}, err
		case writeApplied:
			return Result{}, needsReconciliation("store admitted the effect without launching it", nil)
		}
		return Result{}, needsReconciliation("admission acknowledgement lost", err)
	}
	// The effect launched; an error AdmitDispatch reports after that (say,
	// releasing the fence) changes nothing.
	admitted := claim.Clone()
	admitted.State = EffectAdmitted
	admitted.Revision = claim.Revision + 1
	if launchErr != nil {
		return markUnknown(ctx, st, swap, effect, admitted, launchErr)
	}
	res, err := exec.Wait(ctx)
	if err != nil {
		if ctx.Err() != nil {
			// The execution may still finish; only its own host knows.
			return Result{}, needsReconciliation("stopped waiting for the execution", err)
		}
		return markUnknown(ctx, st, swap, effect, admitted, err)
	}
	return complete(ctx, st, swap, effect, admitted, res)
}

// complete stores the result of an admitted effect through swap.
func complete(ctx context.Context, st Store, swap swapFunc, effect EffectRef, admitted EffectRecord, res Result) (Result, error) {
	done := admitted.Clone()
	done.State = EffectCompleted
	done.Revision = admitted.Revision + 1
	done.Result = Result{Data: append([]byte(nil), res.Data...)}
	err := swap(ctx, admitted.Revision, done.Clone())
	switch classifyWrite(err) {
	case writeApplied:
		return done.Result, nil
	case writeNotApplied:
		return Result{}, err
	}
	// Lost the swap (the host reconciled first) or lost the ack: the
	// stored result, if any, is the answer.
	if stored, ok := storedResult(ctx, st, effect); ok {
		return stored, nil
	}
	if refusal.CodeOf(err) == refusal.CodeTurnNotRunning {
		return Result{}, err
	}
	return Result{}, needsReconciliation("result not confirmed as stored", err)
}

// markUnknown records through swap that an admitted effect's outcome is
// unknown, so that later calls refuse at once, and returns
// needs-reconciliation. Like the completion, the mark goes through the
// fence's Complete when there is one: a fence still held is released
// first, before anything else asks the store.
func markUnknown(ctx context.Context, st Store, swap swapFunc, effect EffectRef, admitted EffectRecord, cause error) (Result, error) {
	mark := admitted.Clone()
	mark.State = EffectNeedsReconciliation
	mark.Revision = admitted.Revision + 1
	err := swap(ctx, admitted.Revision, mark)
	if refusal.CodeOf(err) == refusal.CodeClaimConflict {
		if stored, ok := storedResult(ctx, st, effect); ok {
			return stored, nil
		}
	}
	return Result{}, needsReconciliation("dispatch outcome unknown", cause)
}

// afterConflict answers a refused claim or admission: a claim conflict may
// mean the effect completed meanwhile, so read once and return the stored
// result; any other refusal is returned as it is.
func afterConflict(ctx context.Context, st Store, effect EffectRef, err error) (Result, error) {
	if refusal.CodeOf(err) == refusal.CodeClaimConflict {
		if stored, ok := storedResult(ctx, st, effect); ok {
			return stored, nil
		}
	}
	return Result{}, err
}
