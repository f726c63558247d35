package recovery

import (
	"context"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// report hands the event of kind for turn to the observer, with the code
// and cause of err; with no observer it does nothing.
func (r *TurnRecovery) report(ctx context.Context, kind observe.Kind, turn TurnRef, err error) {
	if r.obs == nil {
		return
	}
	r.obs.Observe(ctx, withErr(observe.Event{Kind: kind, Conversation: turn.Conversation, Turn: turn.Turn}, err))
}

// withErr sets e's Code and Err from err.
func withErr(e observe.Event, err error) observe.Event {
	if err != nil {
		e.Code, e.Err = refusal.CodeOf(err), err
	}
	return e
}

// effectReport reports the moments of one Execute: the claim opens what the
// outcome closes, on the context the observer returned for the claim.
type effectReport struct {
	obs    observe.Observer
	effect EffectRef
	ctx    context.Context // the claim's context, once claimed
}

func (p *effectReport) event(kind observe.Kind, phase observe.Phase) observe.Event {
	return observe.Event{Kind: kind, Phase: phase, Conversation: p.effect.Turn.Conversation, Turn: p.effect.Turn.Turn, Effect: p.effect.Effect}
}

// claim reports that Execute is about to claim the effect and returns the
// context the rest of the call runs under.
func (p *effectReport) claim(ctx context.Context) context.Context {
	if p.obs == nil {
		return ctx
	}
	p.ctx = p.obs.Observe(ctx, p.event(observe.EffectClaim, observe.Start))
	return p.ctx
}

// point reports a moment between the claim and the outcome.
func (p *effectReport) point(kind observe.Kind) {
	if p.obs == nil || p.ctx == nil {
		return
	}
	p.obs.Observe(p.ctx, p.event(kind, observe.Point))
}

// end reports Execute's outcome err: an end after a claim, a point before
// one. A stored result returned without a claim reports nothing.
func (p *effectReport) end(ctx context.Context, err error) {
	if p.obs == nil || (err == nil && p.ctx == nil) {
		return
	}
	kind := observe.EffectComplete
	switch code := refusal.CodeOf(err); {
	case code == refusal.CodeNeedsReconciliation:
		kind = observe.EffectNeedsReconciliation
	case err != nil:
		kind = observe.EffectRefuse
	}
	e := p.event(kind, observe.Point)
	if p.ctx != nil {
		ctx, e.Phase = p.ctx, observe.End
	}
	p.obs.Observe(ctx, withErr(e, err))
}

// reportEffect reports a moment of effect outside Execute (Reconcile).
func (r *TurnRecovery) reportEffect(ctx context.Context, kind observe.Kind, effect EffectRef, err error) {
	if r.obs == nil {
		return
	}
	e := observe.Event{Kind: kind, Conversation: effect.Turn.Conversation, Turn: effect.Turn.Turn, Effect: effect.Effect}
	r.obs.Observe(ctx, withErr(e, err))
}

// reportEnd reports the outcome of Cancel's or Finish's commit.
func (r *TurnRecovery) reportEnd(ctx context.Context, turn TurnRef, status TurnStatus, err error) {
	if r.obs == nil {
		return
	}
	e := observe.Event{Kind: observe.TurnEnd, Conversation: turn.Conversation, Turn: turn.Turn, Status: string(status)}
	r.obs.Observe(ctx, withErr(e, err))
}

// reportAbort reports the abort hook's return, given n in-flight effects.
func (r *TurnRecovery) reportAbort(ctx context.Context, turn TurnRef, n int, err error) {
	if r.obs == nil {
		return
	}
	e := observe.Event{Kind: observe.TurnAbort, Conversation: turn.Conversation, Turn: turn.Turn, Count: n}
	r.obs.Observe(ctx, withErr(e, err))
}
