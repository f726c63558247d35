package recoverytest

import (
	"context"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Dispatching returns st, which must also be a [recovery.Admitter], with a
// [recovery.Dispatcher] made of st's own methods: ClaimEffect reads the turn
// (LoadTurn) and claims with CompareAndSwapEffect; its fence admits with
// AdmitDispatch (which releases the fence before it returns, as the
// Dispatcher contract allows) and completes with CompareAndSwapEffect. So
// TurnRecovery.Execute takes its Dispatcher path over any Store, with
// every failpoint of the fake store in play; the simulation runs half its
// seeds through it.
func Dispatching(st recovery.Store) recovery.Store {
	adm, _ := st.(recovery.Admitter)
	return dispatching{Store: st, adm: adm}
}

type dispatching struct {
	recovery.Store
	adm recovery.Admitter
}

var (
	_ recovery.Dispatcher = dispatching{}
	_ recovery.Admitter   = dispatching{}
)

func (d dispatching) AdmitDispatch(ctx context.Context, adm recovery.Admission, launch recovery.DispatchFunc) error {
	if d.adm == nil {
		return refusal.New(refusal.CodeAdmissionUnavailable, "", "recoverytest: the store has no admission seam")
	}
	return d.adm.AdmitDispatch(ctx, adm, launch)
}

func (d dispatching) ClaimEffect(ctx context.Context, c recovery.Claim) (recovery.ClaimResult, error) {
	rec, err := d.LoadTurn(ctx, c.Effect.Turn)
	if err != nil {
		if refusal.CodeOf(err) == refusal.CodeTurnNotRunning {
			return recovery.ClaimResult{}, err
		}
		return recovery.ClaimResult{}, refusal.Wrap(refusal.CodeStoreUnavailable, "", "recoverytest: reading the turn failed", err)
	}
	eff, ok := rec.Effect(c.Effect.Effect)
	if !ok {
		return recovery.ClaimResult{}, refusal.New(refusal.CodeUnknownEffect, "/effectId", "recoverytest: no such effect")
	}
	claimable := rec.Status == recovery.TurnRunning &&
		(eff.State == recovery.EffectPending || (eff.State == recovery.EffectClaimed && !c.Now.Before(eff.LeaseUntil)))
	if !claimable {
		return recovery.ClaimResult{Status: rec.Status, Record: eff}, nil
	}
	claim := recovery.EffectRecord{ID: eff.ID, Revision: eff.Revision + 1, State: recovery.EffectClaimed,
		Holder: c.Holder, LeaseUntil: c.LeaseUntil}
	if err := d.CompareAndSwapEffect(ctx, c.Effect.Turn, eff.Revision, claim.Clone()); err != nil {
		return recovery.ClaimResult{}, err
	}
	return recovery.ClaimResult{Status: rec.Status, Record: claim, Fence: dispatchFence{d: d, turn: c.Effect.Turn}}, nil
}

// dispatchFence is the fence of Dispatching: AdmitDispatch's own.
type dispatchFence struct {
	d    dispatching
	turn recovery.TurnRef
}

func (f dispatchFence) AdmitDispatch(ctx context.Context, adm recovery.Admission, launch recovery.DispatchFunc) error {
	return f.d.AdmitDispatch(ctx, adm, launch)
}

func (f dispatchFence) Complete(ctx context.Context, expected uint64, next recovery.EffectRecord) error {
	return f.d.CompareAndSwapEffect(ctx, f.turn, expected, next)
}

func (f dispatchFence) Close(context.Context) {}
