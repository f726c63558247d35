package recoverytest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// leaseTime is the fixed lease the checks write; stores treat it as data.
var leaseTime = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func newTurn(turn recovery.TurnRef, ids ...string) recovery.TurnRecord {
	rec := recovery.TurnRecord{Turn: turn, Status: recovery.TurnRunning}
	for _, id := range ids {
		rec.Effects = append(rec.Effects, recovery.EffectRecord{ID: id, Revision: 1, State: recovery.EffectPending})
	}
	return rec
}

func claimed(id string, rev uint64, holder string) recovery.EffectRecord {
	return recovery.EffectRecord{ID: id, Revision: rev, State: recovery.EffectClaimed, Holder: holder, LeaseUntil: leaseTime}
}

func completed(prev recovery.EffectRecord, data string) recovery.EffectRecord {
	next := prev.Clone()
	next.Revision++
	next.State = recovery.EffectCompleted
	next.Result = recovery.Result{Data: []byte(data)}
	return next
}

func loadEffect(ctx context.Context, st recovery.Store, turn recovery.TurnRef, id string) (recovery.EffectRecord, error) {
	rec, err := st.LoadTurn(ctx, turn)
	if err != nil {
		return recovery.EffectRecord{}, fmt.Errorf("LoadTurn: %w", err)
	}
	e, ok := rec.Effect(id)
	if !ok {
		return recovery.EffectRecord{}, fmt.Errorf("LoadTurn: effect %q missing", id)
	}
	return e, nil
}

// wantEffect loads effect id and compares state and revision.
func wantEffect(ctx context.Context, st recovery.Store, turn recovery.TurnRef, id string, state recovery.EffectState, rev uint64) error {
	e, err := loadEffect(ctx, st, turn, id)
	if err != nil {
		return err
	}
	if e.State != state || e.Revision != rev {
		return fmt.Errorf("effect %q is %s at revision %d, want %s at %d", id, e.State, e.Revision, state, rev)
	}
	return nil
}

func wantCode(what string, err error, want refusal.Sentinel) error {
	if !errors.Is(err, want) {
		return fmt.Errorf("%s: got %v, want an error matching %s", what, err, want)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func checkCreateLoad(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	st := s.Store
	rec := newTurn(turn, "a", "b")
	if err := st.CreateTurn(ctx, rec); err != nil {
		return fmt.Errorf("CreateTurn: %w", err)
	}
	got, err := st.LoadTurn(ctx, turn)
	if err != nil {
		return fmt.Errorf("LoadTurn: %w", err)
	}
	if got.Turn != turn || got.Status != recovery.TurnRunning || len(got.Effects) != 2 ||
		!got.Effects[0].Equal(rec.Effects[0]) || !got.Effects[1].Equal(rec.Effects[1]) {
		return fmt.Errorf("LoadTurn = %+v, want %+v", got, rec)
	}
	got.Effects[0].State = recovery.EffectCompleted // must not reach the store
	other := recovery.TurnRef{Conversation: turn.Conversation, Turn: turn.Turn + "-other"}
	_, errMissing := st.LoadTurn(ctx, other)
	return firstErr(
		wantCode("CreateTurn of an existing turn", st.CreateTurn(ctx, newTurn(turn, "c")), refusal.ErrClaimConflict),
		wantEffect(ctx, st, turn, "a", recovery.EffectPending, 1),
		wantCode("LoadTurn of a missing turn", errMissing, refusal.ErrTurnNotRunning),
	)
}

// checkCASRevision runs on a turn whose effect a was claimed by a swap at
// its current revision (onClaimed).
func checkCASRevision(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	st := s.Store
	e, err := loadEffect(ctx, st, turn, "a")
	if err != nil {
		return err
	}
	if !e.Equal(claimed("a", 2, "h")) {
		return fmt.Errorf("after the swap the effect is %+v", e)
	}
	missing := recovery.TurnRef{Conversation: turn.Conversation, Turn: turn.Turn + "-missing"}
	return firstErr(
		wantCode("CompareAndSwapEffect at a stale revision", st.CompareAndSwapEffect(ctx, turn, 1, claimed("a", 2, "h2")), refusal.ErrClaimConflict),
		wantCode("CompareAndSwapEffect at a future revision", st.CompareAndSwapEffect(ctx, turn, 3, claimed("a", 4, "h2")), refusal.ErrClaimConflict),
		wantCode("CompareAndSwapEffect of an unknown effect", st.CompareAndSwapEffect(ctx, turn, 1, claimed("zz", 2, "h2")), refusal.ErrClaimConflict),
		wantCode("CompareAndSwapEffect of a missing turn", st.CompareAndSwapEffect(ctx, missing, 1, claimed("a", 2, "h2")), refusal.ErrTurnNotRunning),
		wantEffect(ctx, st, turn, "a", recovery.EffectClaimed, 2),
	)
}

// checkCASConcurrent races swaps from one revision: exactly one may win.
func checkCASConcurrent(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	st := s.Store
	if err := st.CreateTurn(ctx, newTurn(turn, "a")); err != nil {
		return fmt.Errorf("CreateTurn: %w", err)
	}
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			errs[i] = st.CompareAndSwapEffect(ctx, turn, 1, claimed("a", 2, fmt.Sprintf("h%d", i)))
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			return fmt.Errorf("two swaps from revision 1 both succeeded (holders h%d and h%d)", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, refusal.ErrClaimConflict):
			return fmt.Errorf("a losing swap returned %v, want claim-conflict", err)
		}
	}
	if winner < 0 {
		return errors.New("no swap from the current revision succeeded")
	}
	e, err := loadEffect(ctx, st, turn, "a")
	if err != nil {
		return err
	}
	if e.Holder != fmt.Sprintf("h%d", winner) {
		return fmt.Errorf("stored holder %q, but h%d won", e.Holder, winner)
	}
	return nil
}

// checkCASPerEffect advances two effects concurrently: their revisions are
// independent, so no swap may conflict.
func checkCASPerEffect(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	st := s.Store
	if err := st.CreateTurn(ctx, newTurn(turn, "a", "b")); err != nil {
		return fmt.Errorf("CreateTurn: %w", err)
	}
	const steps = 20
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, id := range []string{"a", "b"} {
		wg.Go(func() {
			for rev := uint64(1); rev <= steps; rev++ {
				if err := st.CompareAndSwapEffect(ctx, turn, rev, claimed(id, rev+1, "h")); err != nil {
					errs[i] = fmt.Errorf("swap of %q from revision %d: %w", id, rev, err)
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr(errs[0], errs[1],
		wantEffect(ctx, st, turn, "a", recovery.EffectClaimed, steps+1),
		wantEffect(ctx, st, turn, "b", recovery.EffectClaimed, steps+1))
}

// checkCASAfterEnd stores an in-flight result after cancellation without
// reopening the turn; it runs on a turn whose effect a is claimed
// (onClaimed).
func checkCASAfterEnd(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	st := s.Store
	if _, err := st.EndTurn(ctx, turn, recovery.TurnCancelled); err != nil {
		return fmt.Errorf("EndTurn: %w", err)
	}
	if err := st.CompareAndSwapEffect(ctx, turn, 2, completed(claimed("a", 2, "h"), "late")); err != nil {
		return fmt.Errorf("a completion after cancellation must be stored: %w", err)
	}
	rec, err := st.LoadTurn(ctx, turn)
	if err != nil {
		return fmt.Errorf("LoadTurn: %w", err)
	}
	if rec.Status != recovery.TurnCancelled {
		return fmt.Errorf("storing a late result reopened the turn: status %s", rec.Status)
	}
	return wantEffect(ctx, st, turn, "a", recovery.EffectCompleted, 3)
}

func checkEndTurn(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	st := s.Store
	if err := st.CreateTurn(ctx, newTurn(turn, "a")); err != nil {
		return fmt.Errorf("CreateTurn: %w", err)
	}
	rec, err := st.EndTurn(ctx, turn, recovery.TurnCancelled)
	if err != nil {
		return fmt.Errorf("EndTurn: %w", err)
	}
	if rec.Status != recovery.TurnCancelled || len(rec.Effects) != 1 {
		return fmt.Errorf("EndTurn returned %+v", rec)
	}
	_, again := st.EndTurn(ctx, turn, recovery.TurnCompleted)
	missing := recovery.TurnRef{Conversation: turn.Conversation, Turn: turn.Turn + "-missing"}
	_, errMissing := st.EndTurn(ctx, missing, recovery.TurnCancelled)
	got, err := st.LoadTurn(ctx, turn)
	if err != nil {
		return fmt.Errorf("LoadTurn: %w", err)
	}
	if got.Status != recovery.TurnCancelled {
		return fmt.Errorf("a second EndTurn changed an ended turn to %s", got.Status)
	}
	return firstErr(
		wantCode("EndTurn of an ended turn", again, refusal.ErrTurnNotRunning),
		wantCode("EndTurn of a missing turn", errMissing, refusal.ErrTurnNotRunning),
	)
}
