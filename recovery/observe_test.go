package recovery_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/observetest"
	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// observed is a worker whose moments a Recorder keeps, over a host that
// signals each launch.
func observed(t *testing.T) (*recovery.TurnRecovery, *recoverytest.Host, *observetest.Recorder, chan recovery.EffectRef) {
	leakCheck(t)
	launched := make(chan recovery.EffectRef, 4)
	host := recoverytest.NewHost(&recoverytest.HostOptions{
		OnLaunch: func(_ context.Context, e recovery.EffectRef) { launched <- e },
	})
	host.Grant(caller, turn)
	obs := &observetest.Recorder{}
	st := recoverytest.NewDB(nil).Open("w1")
	rec := recovery.New(recovery.Host{Store: st, Authorizer: host, Aborter: host},
		&recovery.Options{Worker: "w1", Lease: time.Minute, Now: newClock().Now, Observer: obs})
	return rec, host, obs, launched
}

// A turn with two effects, one completed and one in flight when the turn is
// cancelled, then reconciled: each moment is reported once, in order, with
// the identities and codes, and each effect's claim is ended on its context.
func TestObserverSeesATurn(t *testing.T) {
	ctx := t.Context()
	rec, host, obs, launched := observed(t)
	_, err := rec.Start(ctx, caller, turn, []string{"a", "b"})
	require.NoError(t, err)

	wait := background(ctx, rec, caller, ref("a"), host)
	require.Equal(t, ref("a"), <-launched)
	host.Exec(ref("a")).Complete(result("done:a"))
	res, err := wait()
	require.NoError(t, err)
	assert.Equal(t, "done:a", string(res.Data))

	wait = background(ctx, rec, caller, ref("b"), host)
	require.Equal(t, ref("b"), <-launched)
	require.NoError(t, rec.Cancel(ctx, caller, turn)) // aborts b's execution
	_, err = wait()
	require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)

	_, err = rec.Execute(ctx, caller, ref("a"), host) // the stored result: nothing to report
	require.NoError(t, err)
	_, err = rec.Execute(ctx, caller, ref("b"), host) // refused before any claim: a point
	require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
	_, err = rec.Reconcile(ctx, caller, ref("b"), verifiedAs("never sent"))
	require.NoError(t, err)

	// The abort frees b's execution, so b's outcome and the abort's report
	// race: the order is checked per span, and across spans only where one
	// caused the other.
	type seen struct {
		kind   observe.Kind
		phase  observe.Phase
		effect string
		code   refusal.Code
	}
	bySpan := map[int][]seen{}
	at := map[observe.Kind]int{}
	events := obs.Events()
	for i, e := range events {
		assert.Equal(t, turn.Conversation, e.Conversation)
		assert.Equal(t, turn.Turn, e.Turn)
		bySpan[e.Span] = append(bySpan[e.Span], seen{e.Kind, e.Phase, e.Effect, e.Code})
		at[e.Kind] = i
	}
	nr := refusal.CodeNeedsReconciliation
	assert.Equal(t, map[int][]seen{
		0: {
			{observe.TurnStart, observe.Point, "", ""},
			{observe.TurnEnd, observe.Point, "", ""},
			{observe.TurnAbort, observe.Point, "", ""},
			{observe.EffectNeedsReconciliation, observe.Point, "b", nr},
			{observe.EffectReconcile, observe.Point, "b", ""},
		},
		1: {
			{observe.EffectClaim, observe.Start, "a", ""},
			{observe.EffectAdmit, observe.Point, "a", ""},
			{observe.EffectLaunch, observe.Point, "a", ""},
			{observe.EffectComplete, observe.End, "a", ""},
		},
		2: {
			{observe.EffectClaim, observe.Start, "b", ""},
			{observe.EffectAdmit, observe.Point, "b", ""},
			{observe.EffectLaunch, observe.Point, "b", ""},
			{observe.EffectNeedsReconciliation, observe.End, "b", nr},
		},
	}, bySpan)
	assert.Empty(t, obs.Faults())
	assert.Less(t, at[observe.EffectComplete], at[observe.EffectClaim], "a completed before b was claimed")

	var end, abort, bEnd observetest.Recorded
	bEndAt := -1
	for i, e := range events {
		switch {
		case e.Kind == observe.TurnEnd:
			end = e
		case e.Kind == observe.TurnAbort:
			abort = e
		case e.Kind == observe.EffectNeedsReconciliation && e.Phase == observe.End:
			bEnd, bEndAt = e, i
		}
	}
	assert.Less(t, at[observe.TurnEnd], bEndAt, "the cancellation committed before b's outcome")
	assert.Equal(t, string(recovery.TurnCancelled), end.Status)
	assert.Equal(t, 1, abort.Count, "b was in flight at the abort")
	assert.ErrorIs(t, bEnd.Err, recoverytest.ErrAborted)
}

// Refusals carry their codes: a claim conflict and an unknown effect before
// any claim, a finish of a cancelled turn, and a failed abort hook.
func TestObserverSeesRefusals(t *testing.T) {
	ctx := t.Context()
	rec, host, obs, launched := observed(t)
	_, err := rec.Start(ctx, caller, turn, []string{"a"})
	require.NoError(t, err)
	wait := background(ctx, rec, caller, ref("a"), host)
	<-launched
	obs.Reset()

	_, err = rec.Execute(ctx, caller, ref("invented"), host)
	require.ErrorIs(t, err, refusal.ErrUnknownEffect)
	_, err = rec.Start(ctx, caller, turn, []string{"other"})
	require.ErrorIs(t, err, refusal.ErrClaimConflict)
	require.NoError(t, rec.Finish(ctx, caller, turn, recovery.TurnCompleted))
	require.ErrorIs(t, rec.Cancel(ctx, caller, turn), refusal.ErrTurnNotRunning)
	host.Exec(ref("a")).Complete(result("ok"))
	_, err = wait()
	require.NoError(t, err)

	var codes []refusal.Code
	var kinds []observe.Kind
	for _, e := range obs.Events() {
		if e.Kind == observe.EffectAdmit || e.Kind == observe.EffectLaunch {
			// a's admission and launch are reported once AdmitDispatch has
			// returned, which may come after launched fired and the Reset.
			continue
		}
		kinds, codes = append(kinds, e.Kind), append(codes, e.Code)
	}
	assert.Equal(t, []observe.Kind{observe.EffectRefuse, observe.TurnStart, observe.TurnEnd, observe.TurnEnd, observe.EffectComplete}, kinds)
	assert.Equal(t, []refusal.Code{refusal.CodeUnknownEffect, refusal.CodeClaimConflict, "", refusal.CodeTurnNotRunning, ""}, codes)
	assert.Empty(t, obs.Faults())
}

// nopObserver is the cheapest Observer there is.
type nopObserver struct{}

func (nopObserver) Observe(ctx context.Context, _ observe.Event) context.Context { return ctx }

// The observer adds no allocation to Execute: a fresh effect, claimed,
// admitted, launched and completed, allocates as much with a no-op observer
// as with none.
func TestObserverAddsNoAllocation(t *testing.T) {
	allocs := func(obs observe.Observer) float64 {
		host := recoverytest.NewHost(&recoverytest.HostOptions{Outcome: okOutcome})
		host.Grant(caller, turn)
		rec := recovery.New(recovery.Host{Store: recoverytest.NewDB(nil).Open("w"), Authorizer: host},
			&recovery.Options{Worker: "w", Observer: obs})
		ids := make([]string, 200)
		for i := range ids {
			ids[i] = "e" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		}
		_, err := rec.Start(t.Context(), caller, turn, ids)
		require.NoError(t, err)
		i := 0
		return testing.AllocsPerRun(100, func() {
			_, err := rec.Execute(t.Context(), caller, ref(ids[i]), host)
			require.NoError(t, err)
			i++
		})
	}
	none, nop := allocs(nil), allocs(nopObserver{})
	t.Logf("allocations per Execute: %.1f without an observer, %.1f with a no-op one", none, nop)
	assert.Equal(t, none, nop)
}
