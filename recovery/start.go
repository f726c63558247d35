package recovery

import (
	"context"
	"slices"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Start durably starts turn with the effect ids the host authorized for it
// (docs/contract.md section 13.1), each pending at revision 1, after
// authorizing caller for [ActionStart]. No other effect of the turn can ever be
// claimed.
//
// Start is idempotent: when the turn already exists with the same effects
// in the same order, it returns the stored record (whatever its status) so
// that a restarted worker may call it again. It returns an error matching
// [refusal.ErrInvalidTurn] for an empty, over-long or duplicated id; [refusal.ErrUnauthorized];
// [refusal.ErrStoreUnavailable]; [refusal.ErrClaimConflict] when the turn exists with other
// effects; [refusal.ErrCheckpointWriteFailed] when the write was not applied; and
// [refusal.ErrNeedsReconciliation] when its acknowledgement was lost and one read did
// not find the turn.
func (r *TurnRecovery) Start(ctx context.Context, caller string, turn TurnRef, effects []string) (_ TurnRecord, err error) {
	defer func() { r.report(ctx, observe.TurnStart, turn, err) }()
	if err := validateEffects(effects); err != nil {
		return TurnRecord{}, err
	}
	st, err := r.begin(ctx, caller, turn, ActionStart)
	if err != nil {
		return TurnRecord{}, err
	}
	rec := newTurnRecord(turn, slices.Clone(effects))
	err = st.CreateTurn(ctx, rec.Clone())
	switch classifyWrite(err) {
	case writeApplied:
		return rec, nil
	case writeNotApplied:
		return TurnRecord{}, err
	case writeRefused:
		if refusal.CodeOf(err) != refusal.CodeClaimConflict {
			return TurnRecord{}, err
		}
	}
	// The turn exists, or the write may have committed: read once.
	stored, lerr := load(ctx, st, turn)
	switch {
	case lerr == nil && sameEffects(stored, effects):
		return stored, nil
	case lerr == nil:
		return TurnRecord{}, refusal.New(refusal.CodeClaimConflict, "/effects", "turn already started with other effects")
	case classifyWrite(err) == writeUncertain:
		return TurnRecord{}, needsReconciliation("turn start acknowledgement lost", err)
	}
	return TurnRecord{}, lerr
}
