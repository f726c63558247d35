package recovery_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
)

func TestReconcile(t *testing.T) {
	ctx := t.Context()

	t.Run("a completed record never changes", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		before := e.effect("a")
		got, err := rec.Reconcile(ctx, caller, ref("a"), result("something else"))
		require.NoError(t, err)
		assert.Equal(t, "done:a", string(got.Data), "the stored result wins")
		assert.True(t, before.Equal(e.effect("a")))
	})

	t.Run("a pending effect completes without launching", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		got, err := rec.Reconcile(ctx, caller, ref("b"), result("done elsewhere"))
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
		_, err := rec.Reconcile(ctx, "mallory", ref("a"), result("x"))
		require.ErrorIs(t, err, recovery.ErrUnauthorized)
		_, err = rec.Reconcile(ctx, caller, ref("zz"), result("x"))
		require.ErrorIs(t, err, recovery.ErrUnknownEffect)
		_, err = rec.Reconcile(ctx, caller, recovery.EffectRef{Turn: turn}, result("x"))
		require.ErrorIs(t, err, recovery.ErrInvalidTurn)

		e.arm("reconcile.before")
		_, err = rec.Reconcile(ctx, caller, ref("a"), result("x"))
		require.ErrorIs(t, err, recovery.ErrCheckpointWriteFailed)
		assert.Equal(t, recovery.EffectPending, e.effect("a").State)

		e.arm("reconcile.ack-lost")
		got, err := rec.Reconcile(ctx, caller, ref("a"), result("x"))
		require.NoError(t, err, "one read finds the stored result")
		assert.Equal(t, "x", string(got.Data))

		e.arm("load.before") // the first read of Reconcile fails
		_, err = rec.Reconcile(ctx, caller, ref("b"), result("y"))
		require.ErrorIs(t, err, recovery.ErrStoreUnavailable)
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
		_, err := rec.Reconcile(ctx, caller, ref("a"), result("x"))
		require.ErrorIs(t, err, recovery.ErrNeedsReconciliation)
		assert.True(t, e.effect("a").Reconciled, "the write was applied")
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
		_, err := rec.Reconcile(ctx, caller, ref("a"), result("x"))
		require.ErrorIs(t, err, recovery.ErrClaimConflict)
		assert.Equal(t, recovery.EffectClaimed, e.effect("a").State)
		assert.Equal(t, uint64(5), rev, "four attempts")
	})
}
