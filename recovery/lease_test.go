package recovery_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// A claim-conflict caused by another holder's live lease carries when the
// lease ends, typed; the restarted worker waits it out, then Executes again
// (an unadmitted claim is taken over) or Reconciles (an admitted effect).
func TestLeaseErrorTellsWhenToRetry(t *testing.T) {
	ctx := t.Context()

	t.Run("claimed, never admitted: wait, then Execute takes over", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		crashed := e.started()
		e.arm("admit.before") // the first worker dies before its admission
		_, err := crashed.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrCheckpointWriteFailed)
		leaseEnd := e.effect("a").LeaseUntil

		restarted, _ := e.worker()
		_, err = restarted.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrClaimConflict)
		assert.Equal(t, refusal.CodeClaimConflict, refusal.CodeOf(err))
		le, ok := errors.AsType[*recovery.LeaseError](err)
		require.True(t, ok, "a *LeaseError: %v", err)
		assert.True(t, le.Until.Equal(leaseEnd), "until %v, lease %v", le.Until, leaseEnd)
		assert.Equal(t, 0, e.host.Launches(ref("a")))

		e.clock.Advance(le.Until.Sub(e.clock.Now()))
		res, err := restarted.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		assert.NotEmpty(t, res.Data)
		assert.Equal(t, 1, e.host.Launches(ref("a")))
	})

	t.Run("admitted: wait, then Reconcile through the host's lookup", func(t *testing.T) {
		e := newEnv(t, nil, nil) // the execution never ends by itself
		first := e.started()
		wctx, stop := context.WithCancel(ctx)
		wait := background(wctx, first, caller, ref("a"), e.host)
		require.Eventually(t, func() bool { return e.host.Launches(ref("a")) == 1 }, 5*time.Second, time.Millisecond)
		stop() // the first worker stops waiting (as if it crashed)
		_, err := wait()
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)

		restarted, _ := e.worker()
		_, err = restarted.Execute(ctx, caller, ref("a"), e.host)
		le, ok := errors.AsType[*recovery.LeaseError](err)
		require.True(t, ok, "a *LeaseError: %v", err)
		assert.True(t, le.Until.Equal(e.effect("a").LeaseUntil))
		_, err = restarted.Reconcile(ctx, caller, ref("a"), verifiedAs("found"))
		_, ok = errors.AsType[*recovery.LeaseError](err)
		require.True(t, ok, "Reconcile refuses alike before the lease ends: %v", err)

		e.clock.Advance(le.Until.Sub(e.clock.Now()))
		_, err = restarted.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation, "an admitted effect is never relaunched")
		res, err := restarted.Reconcile(ctx, caller, ref("a"), verifiedAs("found"))
		require.NoError(t, err)
		assert.Equal(t, "found", string(res.Data))
		assert.Equal(t, 1, e.host.Launches(ref("a")))
		e.host.Exec(ref("a")).Complete(result("late"))
	})
}

// A store whose AdmitDispatch skips the authorization cannot launch
// through TurnRecovery: Execute refuses the launch and says why.
func TestStoreThatSkipsAuthorizeLaunchesNothing(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, &recoverytest.DBOptions{Broken: recoverytest.BrokenSkipsAuthorize})
	rec := e.started()
	_, err := rec.Execute(ctx, caller, ref("a"), e.host)
	require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
	require.ErrorIs(t, err, recovery.ErrAuthorizeSkipped)
	assert.Equal(t, 0, e.host.Launches(ref("a")))
	// With the caller's authority revoked, the broken store admits, and
	// still nothing launches.
	e.host.Revoke(caller, turn)
	_, err = rec.Execute(ctx, caller, ref("b"), e.host)
	require.ErrorIs(t, err, refusal.ErrUnauthorized, "the component's own check comes first")
	assert.Equal(t, 0, e.host.MaxLaunches())
}
