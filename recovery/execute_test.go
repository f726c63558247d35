package recovery_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// storeOnly hides the Admitter of a store: a host without the admission
// seam.
type storeOnly struct{ recovery.Store }

// faultyAdmitter wraps a sound store and misuses the launch callback.
type faultyAdmitter struct {
	recovery.Store
	adm  recovery.Admitter
	mode string

	mu   sync.Mutex
	kept recovery.DispatchFunc
}

func (f *faultyAdmitter) AdmitDispatch(ctx context.Context, adm recovery.Admission, launch recovery.DispatchFunc) error {
	switch f.mode {
	case "twice":
		return f.adm.AdmitDispatch(ctx, adm, func(ctx context.Context) error {
			_ = launch(ctx)
			return launch(ctx)
		})
	case "late":
		f.mu.Lock()
		f.kept = launch
		f.mu.Unlock()
		return f.adm.AdmitDispatch(ctx, adm, func(context.Context) error { return nil })
	}
	return nil // "silent": returns success without launching
}

func (f *faultyAdmitter) launchLate(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.kept(ctx)
}

func TestExecute(t *testing.T) {
	ctx := t.Context()

	t.Run("completed results are reused", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		first, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		for range 3 {
			w, _ := e.worker()
			again, err := w.Execute(ctx, caller, ref("a"), e.host)
			require.NoError(t, err)
			assert.True(t, first.Equal(again))
		}
		assert.Equal(t, 1, e.host.Launches(ref("a")))
		eff := e.effect("a")
		assert.Equal(t, uint64(4), eff.Revision, "three writes: claim, admission, completion")
		assert.False(t, eff.Reconciled)
	})

	t.Run("refusals before any claim", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		_, err := rec.Execute(ctx, caller, ref("zz"), e.host)
		require.ErrorIs(t, err, refusal.ErrUnknownEffect)
		_, err = rec.Execute(ctx, caller, ref("a"), nil)
		require.ErrorIs(t, err, refusal.ErrInvalidTurn)
		_, err = rec.Execute(ctx, caller, recovery.EffectRef{Turn: turn}, e.host)
		require.ErrorIs(t, err, refusal.ErrInvalidTurn)
		noAuth := recovery.New(recovery.Host{Store: e.db.Open("x")}, nil)
		_, err = noAuth.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrUnauthorized, "no authorizer fails closed")
		assert.Equal(t, recovery.EffectPending, e.effect("a").State)
		assert.Equal(t, 0, e.host.MaxLaunches())
	})

	t.Run("a store without the admission seam refuses dispatch", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		full := e.started()
		noSeam := recovery.New(recovery.Host{Store: storeOnly{e.db.Open("plain")}, Authorizer: e.host}, nil)
		_, err := noSeam.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrAdmissionUnavailable)
		assert.Equal(t, recovery.EffectPending, e.effect("a").State, "nothing claimed")
		want, err := full.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		got, err := noSeam.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err, "completed results are still reused")
		assert.True(t, want.Equal(got))
		assert.Equal(t, 1, e.host.Launches(ref("a")))
	})

	t.Run("a faulty store cannot launch twice or late", func(t *testing.T) {
		for _, mode := range []string{"twice", "late", "silent"} {
			t.Run(mode, func(t *testing.T) {
				e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
				e.started()
				st := e.db.Open("faulty")
				f := &faultyAdmitter{Store: st, adm: st, mode: mode}
				rec := recovery.New(recovery.Host{Store: f, Authorizer: e.host}, nil)
				_, err := rec.Execute(ctx, caller, ref("a"), e.host)
				if mode == "twice" {
					require.NoError(t, err)
					assert.Equal(t, 1, e.host.Launches(ref("a")))
					return
				}
				require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
				if mode == "late" {
					require.Error(t, f.launchLate(ctx))
				}
				assert.Equal(t, 0, e.host.Launches(ref("a")))
			})
		}
	})

	t.Run("claim or admission not written", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		e.arm("claim.before")
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrCheckpointWriteFailed)
		assert.Equal(t, recovery.EffectPending, e.effect("a").State)

		e.arm("admit.before")
		_, err = rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrCheckpointWriteFailed)
		assert.Equal(t, recovery.EffectClaimed, e.effect("a").State)
		assert.Equal(t, 0, e.host.Launches(ref("a")))

		e.clock.Advance(2 * time.Minute) // the abandoned claim expires
		_, err = rec.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		assert.Equal(t, 1, e.host.Launches(ref("a")))
	})

	t.Run("the caller stops waiting", func(t *testing.T) {
		e := newEnv(t, nil, nil) // executions never end by themselves
		rec := e.started()
		wctx, cancel := context.WithCancel(ctx)
		wait := background(wctx, rec, caller, ref("a"), e.host)
		require.Eventually(t, func() bool { return e.host.Launches(ref("a")) == 1 }, 5*time.Second, time.Millisecond)
		cancel()
		_, err := wait()
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		exec := e.host.Exec(ref("a"))
		assert.NoError(t, exec.Context().Err(), "the dispatch context belongs to the host, not to the caller")
		assert.Equal(t, recovery.EffectAdmitted, e.effect("a").State, "still in flight: not marked")
		exec.Complete(result("x")) // end the execution
	})

	t.Run("dispatch error and a failed mark", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: func(recovery.EffectRef) (recovery.Result, error) {
			return recovery.Result{}, errors.New("lost")
		}}, nil)
		rec := e.started()
		e.arm("mark.before")
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		assert.Equal(t, recovery.EffectAdmitted, e.effect("a").State)
		e.clock.Advance(2 * time.Minute)
		_, err = rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		assert.Equal(t, 1, e.host.Launches(ref("a")))
	})

	t.Run("reconciled while the holder was between claim and admission", func(t *testing.T) {
		var other *recovery.TurnRecovery
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, &recoverytest.DBOptions{Hook: func(c recoverytest.Call) {
			if c.Op == recoverytest.OpAdmit && other != nil {
				_, err := other.Reconcile(ctx, caller, ref("a"), verifiedAs("verified"))
				require.NoError(t, err)
			}
		}})
		rec := e.started()
		other, _ = e.worker()
		res, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		assert.Equal(t, "verified", string(res.Data))
		assert.Equal(t, 0, e.host.Launches(ref("a")))
	})

	t.Run("a delayed snapshot cannot authorize a launch", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		st := e.db.Open("late")
		claim := recovery.EffectRecord{ID: "a", Revision: 2, State: recovery.EffectClaimed, Holder: "late/1"}
		require.NoError(t, st.CompareAndSwapEffect(ctx, turn, 1, claim))
		snap, err := st.LoadTurn(ctx, turn) // a valid claim, seen while running
		require.NoError(t, err)
		require.NoError(t, rec.Cancel(ctx, caller, turn))
		a, _ := snap.Effect("a")
		launched := false
		err = st.AdmitDispatch(ctx, recovery.Admission{
			Effect: ref("a"), Revision: a.Revision, Holder: a.Holder,
			Authorize: func(context.Context) error { return nil },
		}, func(context.Context) error { launched = true; return nil })
		require.ErrorIs(t, err, refusal.ErrTurnNotRunning)
		assert.False(t, launched)
		_, err = rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrTurnNotRunning)
		assert.Equal(t, 0, e.host.MaxLaunches())
	})
}
