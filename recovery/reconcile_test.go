package recovery_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func TestReconcile(t *testing.T) {
	ctx := t.Context()

	t.Run("a completed record never changes", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		before := e.effect("a")
		got, err := rec.Reconcile(ctx, caller, ref("a"), verifiedAs("something else"))
		require.NoError(t, err)
		assert.Equal(t, "done:a", string(got.Data), "the stored result wins")
		assert.True(t, before.Equal(e.effect("a")))
	})

	t.Run("a pending effect completes without launching", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		got, err := rec.Reconcile(ctx, caller, ref("b"), verifiedAs("done elsewhere"))
		require.NoError(t, err)
		assert.Equal(t, "done elsewhere", string(got.Data))
		res, err := rec.Execute(ctx, caller, ref("b"), e.host)
		require.NoError(t, err)
		assert.True(t, got.Equal(res))
		assert.Equal(t, 0, e.host.MaxLaunches())
		eff := e.effect("b")
		assert.True(t, eff.Reconciled)
		assert.Equal(t, uint64(2), eff.Revision)
	})

	t.Run("refusals and failpoints", func(t *testing.T) {
		e := newEnv(t, nil, nil)
		rec := e.started()
		_, err := rec.Reconcile(ctx, "mallory", ref("a"), verifiedAs("x"))
		require.ErrorIs(t, err, refusal.ErrUnauthorized)
		_, err = rec.Reconcile(ctx, caller, ref("zz"), verifiedAs("x"))
		require.ErrorIs(t, err, refusal.ErrUnknownEffect)
		_, err = rec.Reconcile(ctx, caller, recovery.EffectRef{Turn: turn}, verifiedAs("x"))
		require.ErrorIs(t, err, refusal.ErrInvalidTurn)

		e.arm("reconcile.before")
		_, err = rec.Reconcile(ctx, caller, ref("a"), verifiedAs("x"))
		require.ErrorIs(t, err, refusal.ErrCheckpointWriteFailed)
		assert.Equal(t, recovery.EffectPending, e.effect("a").State)

		e.arm("reconcile.ack-lost")
		got, err := rec.Reconcile(ctx, caller, ref("a"), verifiedAs("x"))
		require.NoError(t, err, "one read finds the stored result")
		assert.Equal(t, "x", string(got.Data))

		e.arm("load.before") // the first read of Reconcile fails
		_, err = rec.Reconcile(ctx, caller, ref("b"), verifiedAs("y"))
		require.ErrorIs(t, err, refusal.ErrStoreUnavailable)
		assert.Equal(t, recovery.EffectPending, e.effect("b").State)
	})

	t.Run("ack lost and the stored result unreadable", func(t *testing.T) {
		var db *recoverytest.DB
		e := newEnv(t, nil, &recoverytest.DBOptions{Hook: func(c recoverytest.Call) {
			if c.Op == recoverytest.OpCAS {
				_ = db.Arm("load.before") // fails the read after the swap
			}
		}})
		db = e.db
		rec := e.started()
		e.arm("reconcile.ack-lost")
		_, err := rec.Reconcile(ctx, caller, ref("a"), verifiedAs("x"))
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		assert.True(t, e.effect("a").Reconciled, "the write was applied")
	})

	t.Run("needs a lookup that answers", func(t *testing.T) {
		e := newEnv(t, nil, nil)
		rec := e.started()
		_, err := rec.Reconcile(ctx, caller, ref("a"), nil)
		require.ErrorIs(t, err, refusal.ErrInvalidTurn)
		_, err = rec.Reconcile(ctx, caller, ref("a"), func(context.Context, recovery.EffectRef) (recovery.Result, error) {
			return recovery.Result{}, errors.New("payment provider unreachable")
		})
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		assert.Equal(t, recovery.EffectPending, e.effect("a").State)
	})

	t.Run("an effect in flight is not reconciled", func(t *testing.T) {
		e := newEnv(t, nil, nil) // the execution never ends by itself
		rec := e.started()
		wctx, stop := context.WithCancel(ctx)
		wait := background(wctx, rec, caller, ref("a"), e.host)
		require.Eventually(t, func() bool { return e.host.Launches(ref("a")) == 1 }, 5*time.Second, time.Millisecond)
		called := false
		_, err := rec.Reconcile(ctx, caller, ref("a"), func(context.Context, recovery.EffectRef) (recovery.Result, error) {
			called = true
			return result("x"), nil
		})
		require.ErrorIs(t, err, refusal.ErrClaimConflict)
		assert.False(t, called, "no lookup while the lease is live")
		stop()
		_, _ = wait()
		e.host.Exec(ref("a")).Complete(result("x"))
	})

	t.Run("the lookup runs only after a launch in progress returned", func(t *testing.T) {
		var (
			reconciler *recovery.TurnRecovery
			e          *env
			early      atomic.Bool
			seen       atomic.Int32
			recRes     recovery.Result
			recErr     error
			finished   = make(chan struct{})
		)
		lookup := func(context.Context, recovery.EffectRef) (recovery.Result, error) {
			seen.Store(int32(e.host.Launches(ref("a"))))
			return result("looked-up"), nil
		}
		e = newEnv(t, &recoverytest.HostOptions{
			OnLaunch: func(context.Context, recovery.EffectRef) {
				e.clock.Advance(2 * time.Minute) // the worker pauses past its lease inside launch
				go func() {
					defer close(finished)
					recRes, recErr = reconciler.Reconcile(ctx, caller, ref("a"), lookup)
				}()
				select {
				case <-finished:
					early.Store(true)
				case <-time.After(50 * time.Millisecond):
				}
			},
		}, nil)
		rec := e.started()
		reconciler, _ = e.worker()
		wait := background(ctx, rec, caller, ref("a"), e.host)
		<-finished
		require.False(t, early.Load(), "Reconcile returned while launch held the fence")
		require.NoError(t, recErr)
		assert.Equal(t, int32(1), seen.Load(), "the lookup saw the launched execution")
		assert.Equal(t, "looked-up", string(recRes.Data))
		e.host.Exec(ref("a")).Complete(result("done:a")) // the worker's result arrives late
		res, err := wait()
		require.NoError(t, err)
		assert.Equal(t, "looked-up", string(res.Data), "the worker returns the stored result")
		assert.Equal(t, 1, e.host.Launches(ref("a")))
	})

	t.Run("an admitted effect needs the admission fence", func(t *testing.T) {
		e := newEnv(t, nil, nil)
		e.started()
		st := e.db.Open("x")
		require.NoError(t, st.CompareAndSwapEffect(ctx, turn, 1, recovery.EffectRecord{ID: "a", Revision: 2, State: recovery.EffectAdmitted}))
		noSeam := recovery.New(recovery.Host{Store: storeOnly{st}, Authorizer: e.host}, nil)
		_, err := noSeam.Reconcile(ctx, caller, ref("a"), verifiedAs("x"))
		require.ErrorIs(t, err, refusal.ErrAdmissionUnavailable)
	})

	t.Run("gives up after repeated lost swaps", func(t *testing.T) {
		var st *recoverytest.Store
		rev := uint64(1)
		e := newEnv(t, nil, &recoverytest.DBOptions{Hook: func(c recoverytest.Call) {
			if c.Op == recoverytest.OpCAS && c.Worker == "w1" {
				// Another worker moves the effect just before each swap.
				next := recovery.EffectRecord{ID: "a", Revision: rev + 1, State: recovery.EffectClaimed, Holder: "other"}
				if st.CompareAndSwapEffect(t.Context(), turn, rev, next) == nil {
					rev++
				}
			}
		}})
		st = e.db.Open("other")
		rec := e.started()
		_, err := rec.Reconcile(ctx, caller, ref("a"), verifiedAs("x"))
		require.ErrorIs(t, err, refusal.ErrClaimConflict)
		assert.Equal(t, recovery.EffectClaimed, e.effect("a").State)
		assert.Equal(t, uint64(5), rev, "four attempts")
	})
}
