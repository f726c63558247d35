package recoverytest

import (
	"context"
	"fmt"
	"time"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// checkDispatch checks the optional recovery.Dispatcher seam, when the
// store offers it: ClaimEffect claims a pending effect and hands out the
// fence, refuses to claim under a live lease and takes an ended one over,
// returns a completed effect's result without claiming, tells a missing
// turn and effect apart; the fence admits and launches once, completes,
// and Close releases it (an EndTurn after it does not wait).
func checkDispatch(ctx context.Context, s Subject, turn recovery.TurnRef) error {
	d, ok := s.Store.(recovery.Dispatcher)
	if !ok {
		return fmt.Errorf("%w: the store is not a recovery.Dispatcher", errSkip)
	}
	st := s.Store
	if err := st.CreateTurn(ctx, newTurn(turn, "a", "b")); err != nil {
		return fmt.Errorf("CreateTurn: %w", err)
	}
	now := leaseTime.Add(-time.Hour)
	claim := func(id, holder string, at time.Time) (recovery.ClaimResult, error) {
		return d.ClaimEffect(ctx, recovery.Claim{Effect: recovery.EffectRef{Turn: turn, Effect: id}, Holder: holder, LeaseUntil: leaseTime, Now: at})
	}
	c, err := claim("a", "h1", now)
	switch {
	case err != nil:
		return fmt.Errorf("ClaimEffect of a pending effect: %w", err)
	case c.Fence == nil || c.Status != recovery.TurnRunning:
		return fmt.Errorf("ClaimEffect of a pending effect: no fence, or status %q", c.Status)
	case c.Record.State != recovery.EffectClaimed || c.Record.Revision != 2 || c.Record.Holder != "h1" || !c.Record.LeaseUntil.Equal(leaseTime):
		return fmt.Errorf("ClaimEffect returned %+v, want a claim by h1 at revision 2", c.Record)
	}
	other, err := claim("a", "h2", now)
	if err != nil || other.Fence != nil || other.Record.Holder != "h1" {
		if other.Fence != nil {
			other.Fence.Close(ctx)
		}
		c.Fence.Close(ctx)
		return fmt.Errorf("ClaimEffect under a live lease: claimed=%v record %+v err %v, want the live claim of h1 and no fence", other.Fence != nil, other.Record, err)
	}
	var n counter
	if err := c.Fence.AdmitDispatch(ctx, admission(turn, "a", 2, "h1"), n.launch); err != nil || n.n.Load() != 1 {
		c.Fence.Close(ctx)
		return fmt.Errorf("the fence's AdmitDispatch: %v, %d launches", err, n.n.Load())
	}
	admitted := claimed("a", 3, "h1")
	admitted.State = recovery.EffectAdmitted
	if err := c.Fence.Complete(ctx, 3, completed(admitted, "r")); err != nil {
		c.Fence.Close(ctx)
		return fmt.Errorf("the fence's Complete: %w", err)
	}
	c.Fence.Close(ctx)
	c.Fence.Close(ctx) // idempotent
	done, err := claim("a", "h3", leaseTime.Add(time.Hour))
	if err != nil || done.Fence != nil || done.Record.State != recovery.EffectCompleted || string(done.Record.Result.Data) != "r" {
		return fmt.Errorf("ClaimEffect of a completed effect: %+v, %v; want its result and no claim", done.Record, err)
	}

	// b: claimed, abandoned (the fence closed without admission), then
	// taken over once its lease ended.
	b1, err := claim("b", "h4", now)
	if err != nil || b1.Fence == nil {
		return fmt.Errorf("ClaimEffect of b: %v", err)
	}
	b1.Fence.Close(ctx)
	b2, err := claim("b", "h5", leaseTime)
	if err != nil || b2.Fence == nil || b2.Record.Holder != "h5" || b2.Record.Revision != 3 {
		return fmt.Errorf("ClaimEffect after the lease ended: %+v, %v; want a takeover by h5 at revision 3", b2.Record, err)
	}
	b2.Fence.Close(ctx)

	_, errEffect := claim("zz", "h6", now)
	_, errTurn := d.ClaimEffect(ctx, recovery.Claim{Effect: recovery.EffectRef{Turn: recovery.TurnRef{Conversation: turn.Conversation, Turn: turn.Turn + "-missing"}, Effect: "a"},
		Holder: "h6", LeaseUntil: leaseTime, Now: now})
	if err := firstErr(wantCode("ClaimEffect of an unknown effect", errEffect, refusal.ErrUnknownEffect),
		wantCode("ClaimEffect in a missing turn", errTurn, refusal.ErrTurnNotRunning)); err != nil {
		return err
	}
	ectx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := st.EndTurn(ectx, turn, recovery.TurnCancelled); err != nil {
		return fmt.Errorf("EndTurn after the fences were closed (a fence still held?): %w", err)
	}
	after, err := claim("b", "h7", leaseTime.Add(time.Hour))
	if err != nil || after.Fence != nil || after.Status != recovery.TurnCancelled {
		if after.Fence != nil {
			after.Fence.Close(ctx)
		}
		return fmt.Errorf("ClaimEffect in a cancelled turn: status %q, claimed=%v, %v; want no claim", after.Status, after.Fence != nil, err)
	}
	return nil
}
