package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// driver is a test host driving turns through TurnRecovery the way a
// backend does after crashes and lost acknowledgements: it repeats a call
// whose outcome is unknown, waits out another worker's claim, and
// reconciles an effect whose outcome is unknown through its own
// idempotency record (launched) rather than by executing it again.
type driver struct {
	rec      *recovery.TurnRecovery
	launcher recovery.Launcher
	// launched is the host's idempotency record: how many times the
	// effect's side effect happened.
	launched func(recovery.EffectRef) int
	// after, when set, runs after every call of the component.
	after func(what string)
	// pause is how long to wait before repeating a call refused with a
	// claim conflict (another worker's lease).
	pause    time.Duration
	attempts int
}

func (d *driver) done(what string) {
	if d.after != nil {
		d.after(what)
	}
}

// repeat runs op until it succeeds, repeating unknown outcomes and claim
// conflicts; any other error ends it.
func (d *driver) repeat(ctx context.Context, turn recovery.TurnRef, what string, op func() error) error {
	for attempt := 1; ; attempt++ {
		err := op()
		d.done(what)
		switch {
		case err == nil:
			return nil
		case attempt >= d.attempts:
			return fmt.Errorf("%v %s: still failing after %d attempts: %w", turn, what, attempt, err)
		case errors.Is(err, refusal.ErrClaimConflict):
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(d.pause):
			}
		case !errors.Is(err, refusal.ErrNeedsReconciliation):
			return fmt.Errorf("%v %s: %w", turn, what, err)
		}
	}
}

// turn starts turn with effects (idempotently), executes each, cancelling
// the turn after cancelAfter of them (never when cancelAfter < 0) or
// finishing it at the end.
func (d *driver) turn(ctx context.Context, turn recovery.TurnRef, effects []string, cancelAfter int) error {
	err := d.repeat(ctx, turn, "start", func() error { _, err := d.rec.Start(ctx, "host", turn, effects); return err })
	if err != nil {
		return err
	}
	for i, id := range effects {
		if i == cancelAfter {
			if err := d.repeat(ctx, turn, "cancel", func() error { return d.rec.Cancel(ctx, "host", turn) }); err != nil {
				return err
			}
		}
		if err := d.effect(ctx, recovery.EffectRef{Turn: turn, Effect: id}); err != nil {
			return err
		}
	}
	if cancelAfter >= 0 {
		return nil
	}
	return d.repeat(ctx, turn, "finish", func() error { return d.rec.Finish(ctx, "host", turn, recovery.TurnCompleted) })
}

// effect executes one effect until it has a stored result, or the turn
// ended before it was admitted.
func (d *driver) effect(ctx context.Context, ref recovery.EffectRef) error {
	return d.repeat(ctx, ref.Turn, "execute "+ref.Effect, func() error {
		_, err := d.rec.Execute(ctx, "host", ref, d.launcher)
		d.done("execute " + ref.Effect)
		switch {
		case errors.Is(err, refusal.ErrTurnNotRunning):
			return nil // cancelled before admission: never launched
		case !errors.Is(err, refusal.ErrNeedsReconciliation):
			return err
		}
		// The outcome is unknown. An effect that was admitted is looked up
		// in the host's own record and reconciled; one that is only
		// claimed (a lost claim acknowledgement) is executed again once
		// its lease expired.
		cur, lerr := d.rec.Load(ctx, "host", ref.Turn)
		d.done("load")
		if lerr != nil {
			return err
		}
		if e, _ := cur.Effect(ref.Effect); e.State != recovery.EffectAdmitted && e.State != recovery.EffectNeedsReconciliation {
			return err
		}
		_, err = d.rec.Reconcile(ctx, "host", ref, func(context.Context, recovery.EffectRef) (recovery.Result, error) {
			if d.launched(ref) > 0 {
				return recovery.Result{Data: []byte("ran:" + ref.Effect)}, nil
			}
			return recovery.Result{Data: []byte("not-run")}, nil
		})
		d.done("reconcile " + ref.Effect)
		return err
	})
}
