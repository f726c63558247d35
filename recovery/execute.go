package recovery

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/Papercusp/chat-protocol-go/internal/wire"
)

// Execute runs one authorized effect at most once and returns its result
// (seed 000; contract-v1.md section 13). caller is the host's principal id.
//
// It authorizes caller for ActionExecute and reads the effect. A completed
// effect returns its stored result without launching: completed results
// are reused. Otherwise it claims the effect with a compare-and-swap, then
// asks the Store's Admitter to admit it; AdmitDispatch revalidates caller,
// the running turn and the claim revision under the fence it shares with
// cancellation, durably marks admission and calls l.Launch exactly once.
// Execute then waits for the execution outside the fence and stores its
// result with a compare-and-swap. Launch is never called any other way, so
// a delayed snapshot, a retry or the abort hook can never cause a launch.
//
// Errors, each an *Error:
//   - ErrInvalidTurn, ErrUnauthorized, ErrStoreUnavailable, ErrUnknownEffect;
//   - ErrTurnNotRunning: the turn was cancelled or finished before
//     admission; nothing launched;
//   - ErrAdmissionUnavailable: the Store has no Admitter; nothing launched;
//   - ErrClaimConflict: another worker holds a live claim on the effect, or
//     won the claim; nothing launched by this call;
//   - ErrCheckpointWriteFailed: a claim or admission write was not applied
//     (nothing launched; a claim that was written keeps other workers out
//     until its lease expires), or the result could not be stored (the
//     effect launched: the host reconciles it);
//   - ErrNeedsReconciliation: the outcome is unknown: Launch or Wait
//     failed, an acknowledgement was lost, the effect was admitted earlier
//     and has no result, or ctx ended while waiting. A later Execute of the
//     effect returns it again, never relaunching; the host looks the effect
//     up through its own idempotency records from Reconcile's lookup.
//
// When the completion's acknowledgement is lost or its compare-and-swap
// lost, Execute reads the stored record once and returns the stored
// result: every result Execute returns with a nil error is the stored one.
func (r *TurnRecovery) Execute(ctx context.Context, caller string, effect EffectRef, l Launcher) (_ Result, err error) {
	rep := effectReport{obs: r.obs, effect: effect}
	defer func() { rep.end(ctx, err) }()
	if err := effect.Validate(); err != nil {
		return Result{}, err
	}
	if l == nil {
		return Result{}, wire.New(refusal.CodeInvalidTurn, "", "nil launcher")
	}
	st, err := r.begin(ctx, caller, effect.Turn, ActionExecute)
	if err != nil {
		return Result{}, err
	}
	rec, eff, err := loadEffect(ctx, st, effect)
	if err != nil {
		return Result{}, err
	}
	now := r.now()
	switch eff.State {
	case EffectCompleted:
		return eff.Result, nil
	case EffectNeedsReconciliation:
		return Result{}, needsReconciliation("effect outcome unknown: reconcile it", nil)
	case EffectAdmitted:
		if now.Before(eff.LeaseUntil) {
			return Result{}, wire.New(refusal.CodeClaimConflict, "", "effect in flight under another worker")
		}
		return Result{}, needsReconciliation("effect admitted earlier without a stored result", nil)
	case EffectClaimed:
		if now.Before(eff.LeaseUntil) {
			return Result{}, wire.New(refusal.CodeClaimConflict, "", "effect claimed by another worker")
		}
	}
	if rec.Status != TurnRunning {
		return Result{}, wire.New(refusal.CodeTurnNotRunning, "", "turn is "+string(rec.Status))
	}
	adm, ok := st.(Admitter)
	if !ok {
		return Result{}, wire.New(refusal.CodeAdmissionUnavailable, "", "the store has no admission seam: dispatch refused")
	}

	ctx = rep.claim(ctx)
	claim := EffectRecord{
		ID:         eff.ID,
		Revision:   eff.Revision + 1,
		State:      EffectClaimed,
		Holder:     r.holder(),
		LeaseUntil: now.Add(r.lease).Truncate(time.Microsecond), // what timestamptz keeps
	}
	err = st.CompareAndSwapEffect(ctx, effect.Turn, eff.Revision, claim.Clone())
	switch classifyWrite(err) {
	case writeRefused:
		return afterConflict(ctx, st, effect, err)
	case writeNotApplied:
		return Result{}, err
	case writeUncertain:
		return Result{}, needsReconciliation("claim acknowledgement lost", err)
	}
	return r.dispatch(ctx, caller, st, adm, effect, claim, l, &rep)
}

// admission is what AdmitDispatch revalidates for rec, the effect's record
// as the caller last wrote or read it: its revision, its holder and the
// caller's current authority for action.
func (r *TurnRecovery) admission(caller string, effect EffectRef, rec EffectRecord, action Action) Admission {
	return Admission{
		Effect:   effect,
		Revision: rec.Revision,
		Holder:   rec.Holder,
		Authorize: func(ctx context.Context) error {
			return r.authorize(ctx, caller, effect.Turn, action)
		},
	}
}

// launchOnce is the callback Execute gives AdmitDispatch: it calls the
// host's Launcher at most once, and never after AdmitDispatch returned, even
// if a faulty store calls it again or late.
type launchOnce struct {
	mu       sync.Mutex
	called   bool
	closed   bool
	exec     Execution
	err      error
	launcher Launcher
	effect   EffectRef
}

var errLaunchRefused = errors.New("recovery: launch called twice or after AdmitDispatch returned")

func (o *launchOnce) launch(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.called || o.closed {
		return errLaunchRefused
	}
	o.called = true
	o.exec, o.err = o.launcher.Launch(ctx, o.effect)
	if o.err == nil && o.exec == nil {
		o.err = errors.New("recovery: launcher returned no execution")
	}
	return o.err
}

// close stops further launches and reports what happened.
func (o *launchOnce) close() (called bool, exec Execution, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.closed = true
	return o.called, o.exec, o.err
}

// dispatch admits the claimed effect, awaits it and stores its result.
func (r *TurnRecovery) dispatch(ctx context.Context, caller string, st Store, adm Admitter, effect EffectRef, claim EffectRecord, l Launcher, rep *effectReport) (Result, error) {
	once := &launchOnce{launcher: l, effect: effect}
	err := adm.AdmitDispatch(ctx, r.admission(caller, effect, claim, ActionExecute), once.launch)
	launched, exec, launchErr := once.close()
	if launched { // the store committed the admission before it let the launch run
		rep.point(observe.EffectAdmit)
		if launchErr == nil {
			rep.point(observe.EffectLaunch)
		}
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
		return markUnknown(ctx, st, effect, admitted, launchErr)
	}
	res, err := exec.Wait(ctx)
	if err != nil {
		if ctx.Err() != nil {
			// The execution may still finish; only its own host knows.
			return Result{}, needsReconciliation("stopped waiting for the execution", err)
		}
		return markUnknown(ctx, st, effect, admitted, err)
	}
	return complete(ctx, st, effect, admitted, res)
}

// complete stores the result of an admitted effect.
func complete(ctx context.Context, st Store, effect EffectRef, admitted EffectRecord, res Result) (Result, error) {
	done := admitted.Clone()
	done.State = EffectCompleted
	done.Revision = admitted.Revision + 1
	done.Result = Result{Data: append([]byte(nil), res.Data...)}
	err := st.CompareAndSwapEffect(ctx, effect.Turn, admitted.Revision, done.Clone())
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

// markUnknown records that an admitted effect's outcome is unknown, so that
// later calls refuse at once, and returns needs-reconciliation.
func markUnknown(ctx context.Context, st Store, effect EffectRef, admitted EffectRecord, cause error) (Result, error) {
	mark := admitted.Clone()
	mark.State = EffectNeedsReconciliation
	mark.Revision = admitted.Revision + 1
	err := st.CompareAndSwapEffect(ctx, effect.Turn, admitted.Revision, mark)
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
