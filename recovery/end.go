package recovery

import (
	"context"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Cancel cancels a running turn (docs/contract.md section 13.1). It
// authorizes caller for [ActionCancel], commits the cancellation through
// [Store.EndTurn], under the fence admission uses, and only then calls the
// host's Aborter with the turn's in-flight effects: from the commit on,
// nothing of the turn launches, and the abort hook can authorize nothing.
// An in-flight effect's result is still stored when its execution ends,
// without reopening the turn.
//
// Cancel of a cancelled turn calls the abort hook again and returns nil.
// Errors: [refusal.ErrInvalidTurn], [refusal.ErrUnauthorized], [refusal.ErrStoreUnavailable];
// [refusal.ErrTurnNotRunning] for a turn never started, completed or failed;
// [refusal.ErrCheckpointWriteFailed] when the cancellation was not written;
// [refusal.ErrNeedsReconciliation] when its acknowledgement was lost and one read did
// not show it, or when the abort hook failed: the turn is then cancelled
// but the in-flight effects' outcomes are unknown.
func (r *TurnRecovery) Cancel(ctx context.Context, caller string, turn TurnRef) error {
	rec, err := r.end(ctx, caller, turn, TurnCancelled, ActionCancel)
	r.reportEnd(ctx, turn, TurnCancelled, err)
	if err != nil {
		return err
	}
	if r.host.Aborter == nil {
		return nil
	}
	inFlight := rec.InFlight()
	err = r.host.Aborter.Abort(ctx, turn, inFlight)
	if err != nil {
		err = needsReconciliation("turn cancelled, abort hook failed", err)
	}
	r.reportAbort(ctx, turn, len(inFlight), err)
	return err
}

// Finish ends a running turn as completed or failed, after authorizing
// caller for [ActionFinish], under the admission fence like Cancel: nothing of
// the turn launches afterwards. It does not call the abort hook; effects in
// flight still store their results. Finish with the status the turn already
// has returns nil. Errors are those of Cancel, and [refusal.ErrInvalidTurn] for a
// status other than [TurnCompleted] or [TurnFailed].
func (r *TurnRecovery) Finish(ctx context.Context, caller string, turn TurnRef, status TurnStatus) error {
	if status != TurnCompleted && status != TurnFailed {
		return refusal.New(refusal.CodeInvalidTurn, "/status", "finish status must be completed or failed")
	}
	_, err := r.end(ctx, caller, turn, status, ActionFinish)
	r.reportEnd(ctx, turn, status, err)
	return err
}

// end commits the end of a turn, idempotently, and returns the record as
// committed.
func (r *TurnRecovery) end(ctx context.Context, caller string, turn TurnRef, status TurnStatus, action Action) (TurnRecord, error) {
	st, err := r.begin(ctx, caller, turn, action)
	if err != nil {
		return TurnRecord{}, err
	}
	rec, err := st.EndTurn(ctx, turn, status)
	outcome := classifyWrite(err)
	switch {
	case outcome == writeApplied:
		return rec, nil
	case outcome == writeNotApplied:
		return TurnRecord{}, err
	case outcome == writeRefused && refusal.CodeOf(err) != refusal.CodeTurnNotRunning:
		return TurnRecord{}, err
	}
	// Already ended, or the acknowledgement was lost: read once.
	stored, lerr := load(ctx, st, turn)
	switch {
	case lerr == nil && stored.Status == status:
		return stored, nil
	case outcome == writeUncertain:
		return TurnRecord{}, needsReconciliation("turn end acknowledgement lost", err)
	case lerr != nil && refusal.CodeOf(lerr) != refusal.CodeTurnNotRunning:
		return TurnRecord{}, lerr
	}
	return TurnRecord{}, err
}
