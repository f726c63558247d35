package recovery

import (
	"context"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// writeOutcome is what an error from a Store write says about the write.
type writeOutcome int

const (
	writeApplied    writeOutcome = iota // nil: committed and acknowledged
	writeRefused                        // a definite refusal: nothing was written
	writeNotApplied                     // ErrCheckpointWriteFailed: known not written
	writeUncertain                      // anything else: it may have been written
)

// classifyWrite reads the outcome of a write from its error, by the code of
// the first *Error in the chain. Unknown errors are uncertain: assuming a
// write failed when it may have committed is how effects run twice.
func classifyWrite(err error) writeOutcome {
	if err == nil {
		return writeApplied
	}
	switch refusal.CodeOf(err) {
	case refusal.CodeClaimConflict, refusal.CodeTurnNotRunning, refusal.CodeUnauthorized, refusal.CodeUnknownEffect, refusal.CodeInvalidTurn, refusal.CodeInvalidInput:
		return writeRefused
	case refusal.CodeCheckpointWriteFailed, refusal.CodeStoreUnavailable:
		// store-unavailable: a Dispatcher's read failed, nothing written.
		return writeNotApplied
	}
	return writeUncertain
}

// needsReconciliation builds the refusal for an unknown outcome.
func needsReconciliation(msg string, cause error) error {
	return refusal.Wrap(refusal.CodeNeedsReconciliation, "", msg, cause)
}

// load reads a turn record; a failed read becomes ErrStoreUnavailable
// unless the store answered that the turn does not exist.
func load(ctx context.Context, st Store, turn TurnRef) (TurnRecord, error) {
	rec, err := st.LoadTurn(ctx, turn)
	if err == nil {
		return rec, nil
	}
	if refusal.CodeOf(err) == refusal.CodeTurnNotRunning {
		return TurnRecord{}, err
	}
	return TurnRecord{}, refusal.Wrap(refusal.CodeStoreUnavailable, "", "reading the turn record failed", err)
}

// loadEffect reads one effect's record.
func loadEffect(ctx context.Context, st Store, effect EffectRef) (TurnRecord, EffectRecord, error) {
	rec, err := load(ctx, st, effect.Turn)
	if err != nil {
		return TurnRecord{}, EffectRecord{}, err
	}
	eff, ok := rec.Effect(effect.Effect)
	if !ok {
		return TurnRecord{}, EffectRecord{}, refusal.New(refusal.CodeUnknownEffect, "/effectId", "effect not authorized when the turn started")
	}
	return rec, eff, nil
}

// storedResult reads the effect once and returns its result if it is
// completed. It is the one read after a lost compare-and-swap or a lost
// acknowledgement (docs/contract.md section 13.1: read the stored result
// before returning).
func storedResult(ctx context.Context, st Store, effect EffectRef) (Result, bool) {
	_, eff, err := loadEffect(ctx, st, effect)
	if err != nil || eff.State != EffectCompleted {
		return Result{}, false
	}
	return eff.Result, true
}
