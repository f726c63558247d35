package recovery_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The scenarios of issue 6, one test each. Every one counts launches per
// effect with the fake host's recording launcher.

// R1: the completion committed but its acknowledgement was lost; the
// component reads the stored result before returning.
func TestR1CompletionCommittedAckLost(t *testing.T) {
	ctx := t.Context()

	t.Run("ack lost, stored result returned", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		e.arm(recoverytest.Name(recoverytest.SiteComplete, recoverytest.ModeAckLost))
		res, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		assert.Equal(t, "done:a", string(res.Data))
		stored := e.effect("a")
		assert.Equal(t, recovery.EffectCompleted, stored.State)
		assert.True(t, res.Equal(stored.Result))
		again, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		assert.True(t, again.Equal(stored.Result))
		assert.Equal(t, 1, e.host.Launches(ref("a")))
	})

	t.Run("ack lost and the read fails", func(t *testing.T) {
		var cas atomic.Int32
		var db *recoverytest.DB
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, &recoverytest.DBOptions{Hook: func(c recoverytest.Call) {
			if c.Op == recoverytest.OpCAS && cas.Add(1) == 2 { // the completion
				_ = db.Arm(recoverytest.Name(recoverytest.SiteLoad, recoverytest.ModeBefore))
			}
		}})
		db = e.db
		rec := e.started()
		e.arm(recoverytest.Name(recoverytest.SiteComplete, recoverytest.ModeAckLost))
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		res, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		assert.Equal(t, "done:a", string(res.Data))
		assert.Equal(t, 1, e.host.Launches(ref("a")))
	})

	t.Run("completion not written is explicit", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		e.arm(recoverytest.Name(recoverytest.SiteComplete, recoverytest.ModeBefore))
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrCheckpointWriteFailed)
		assert.Equal(t, recovery.EffectAdmitted, e.effect("a").State)
		_, err = rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrClaimConflict, "in flight while the lease lasts")
		e.clock.Advance(2 * time.Minute)
		_, err = rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		verified, err := rec.Reconcile(ctx, caller, ref("a"), verifiedAs("done:a"))
		require.NoError(t, err)
		res, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		assert.True(t, verified.Equal(res))
		assert.Equal(t, 1, e.host.Launches(ref("a")))
	})

	t.Run("crash after the completion committed", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		e.arm(recoverytest.Name(recoverytest.SiteComplete, recoverytest.ModeAfter))
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.Error(t, err)
		fresh, _ := e.worker()
		res, err := fresh.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		assert.Equal(t, "done:a", string(res.Data))
		assert.Equal(t, 1, e.host.Launches(ref("a")))
	})
}

// R2: the claim's acknowledgement is uncertain: needs-reconciliation, no
// launch; the effect launches once later, never twice.
func TestR2UncertainClaimAck(t *testing.T) {
	ctx := t.Context()
	for _, mode := range []recoverytest.Mode{recoverytest.ModeAckLost, recoverytest.ModeAfter} {
		t.Run(string(mode), func(t *testing.T) {
			e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
			rec := e.started()
			e.arm(recoverytest.Name(recoverytest.SiteClaim, mode))
			_, err := rec.Execute(ctx, caller, ref("a"), e.host)
			require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
			assert.Equal(t, recovery.EffectClaimed, e.effect("a").State)
			assert.Equal(t, 0, e.host.Launches(ref("a")))

			retry, _ := e.worker()
			_, err = retry.Execute(ctx, caller, ref("a"), e.host)
			require.ErrorIs(t, err, refusal.ErrClaimConflict, "the uncertain claim holds its lease")
			assert.Equal(t, 0, e.host.Launches(ref("a")))

			e.clock.Advance(2 * time.Minute)
			res, err := retry.Execute(ctx, caller, ref("a"), e.host)
			require.NoError(t, err)
			assert.Equal(t, "done:a", string(res.Data))
			_, err = retry.Execute(ctx, caller, ref("a"), e.host)
			require.NoError(t, err)
			assert.Equal(t, 1, e.host.Launches(ref("a")))
		})
	}
}

// R3: a worker crashes after its admission is durable; fresh workers over
// the same database never launch the effect again.
func TestR3CrashAfterDurableAdmission(t *testing.T) {
	ctx := t.Context()

	t.Run("crash before launch", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		e.arm(recoverytest.Name(recoverytest.SiteAdmit, recoverytest.ModeAfter))
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.Error(t, err)
		assert.Equal(t, recovery.EffectAdmitted, e.effect("a").State)

		w2, _ := e.worker()
		_, err = w2.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrClaimConflict)
		e.clock.Advance(2 * time.Minute)
		w3, _ := e.worker()
		_, err = w3.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		assert.Equal(t, 0, e.host.Launches(ref("a")))

		// The host's idempotency lookup finds no execution.
		_, err = w3.Reconcile(ctx, caller, ref("a"), verifiedAs("not-performed"))
		require.NoError(t, err)
		w4, _ := e.worker()
		res, err := w4.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		assert.Equal(t, "not-performed", string(res.Data))
		assert.Equal(t, 0, e.host.Launches(ref("a")))
		// Effect b is untouched and still runs.
		res, err = w4.Execute(ctx, caller, ref("b"), e.host)
		require.NoError(t, err)
		assert.Equal(t, "done:b", string(res.Data))
	})

	t.Run("crash after launch", func(t *testing.T) {
		var current *recoverytest.Store
		e := newEnv(t, &recoverytest.HostOptions{
			Outcome:  okOutcome,
			OnLaunch: func(context.Context, recovery.EffectRef) { current.Crash() },
		}, nil)
		rec, st := e.worker()
		current = st
		_, err := rec.Start(ctx, caller, turn, []string{"a", "b"})
		require.NoError(t, err)
		_, err = rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		assert.Equal(t, 1, e.host.Launches(ref("a")))

		e.clock.Advance(2 * time.Minute)
		w2, st2 := e.worker()
		current = st2
		_, err = w2.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		truth, err := e.host.Exec(ref("a")).Wait(ctx)
		require.NoError(t, err)
		got, err := w2.Reconcile(ctx, caller, ref("a"), verifiedAs(string(truth.Data)))
		require.NoError(t, err)
		assert.True(t, truth.Equal(got))
		assert.True(t, e.effect("a").Reconciled)
		assert.Equal(t, 1, e.host.Launches(ref("a")))
	})

	t.Run("admission acknowledgement lost", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		e.arm(recoverytest.Name(recoverytest.SiteAdmit, recoverytest.ModeAckLost))
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		assert.Equal(t, recovery.EffectAdmitted, e.effect("a").State)
		assert.Equal(t, 0, e.host.Launches(ref("a")))
	})
}

// R4: a dispatch error returns needs-reconciliation; the model's retry never
// redispatches; a reconciled result is then reused.
func TestR4DispatchErrorThenModelRetry(t *testing.T) {
	ctx := t.Context()
	failures := map[string]*recoverytest.HostOptions{
		"launch error": {LaunchErr: func(recovery.EffectRef) error { return errors.New("upstream 503") }},
		"wait error": {Outcome: func(recovery.EffectRef) (recovery.Result, error) {
			return recovery.Result{}, errors.New("timeout: outcome unknown")
		}},
	}
	for name, opts := range failures {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, opts, nil)
			rec := e.started()
			_, err := rec.Execute(ctx, caller, ref("a"), e.host)
			require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
			assert.Equal(t, recovery.EffectNeedsReconciliation, e.effect("a").State)
			for range 3 { // the model retries
				_, err = rec.Execute(ctx, caller, ref("a"), e.host)
				require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
			}
			fresh, _ := e.worker()
			_, err = fresh.Execute(ctx, caller, ref("a"), e.host)
			require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
			assert.Equal(t, 1, e.host.Launches(ref("a")))

			verified, err := rec.Reconcile(ctx, caller, ref("a"), verifiedAs("charged"))
			require.NoError(t, err)
			res, err := fresh.Execute(ctx, caller, ref("a"), e.host)
			require.NoError(t, err)
			assert.True(t, verified.Equal(res))
			assert.Equal(t, 1, e.host.Launches(ref("a")))
		})
	}
}

// R5: cancellation races admission. The cancel commits first and nothing
// launches, or the admission commits first and the cancel waits for the
// launch, then aborts the in-flight effect through the host.
func TestR5CancellationRacingAdmission(t *testing.T) {
	ctx := t.Context()

	t.Run("cancel commits between claim and admission", func(t *testing.T) {
		var canceller *recovery.TurnRecovery
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, &recoverytest.DBOptions{Hook: func(c recoverytest.Call) {
			if c.Op == recoverytest.OpAdmit && canceller != nil {
				require.NoError(t, canceller.Cancel(ctx, caller, turn))
			}
		}})
		rec := e.started()
		canceller, _ = e.worker()
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrTurnNotRunning)
		assert.Equal(t, 0, e.host.Launches(ref("a")))
		assert.Equal(t, recovery.EffectClaimed, e.effect("a").State)
		require.Len(t, e.host.Aborts(), 1)
		assert.Empty(t, e.host.Aborts()[0].InFlight)
	})

	t.Run("cancel during launch waits, then aborts the execution", func(t *testing.T) {
		var (
			canceller    *recovery.TurnRecovery
			cancelled    = make(chan error, 1)
			cancelEarly  atomic.Bool
			execCtxAlive atomic.Bool
		)
		e := newEnv(t, &recoverytest.HostOptions{OnLaunch: func(context.Context, recovery.EffectRef) {
			go func() { cancelled <- canceller.Cancel(ctx, caller, turn) }()
			select {
			case <-cancelled:
				cancelEarly.Store(true)
			case <-time.After(50 * time.Millisecond):
			}
		}}, nil)
		rec := e.started()
		canceller, _ = e.worker()
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation, "the abort leaves the outcome unknown")
		require.False(t, cancelEarly.Load(), "the cancellation committed while launch held the fence")
		require.NoError(t, <-cancelled)
		exec := e.host.Exec(ref("a"))
		require.NotNil(t, exec)
		execCtxAlive.Store(exec.Context().Err() == nil)
		assert.False(t, execCtxAlive.Load(), "the abort hook must reach the host-owned dispatch context")
		require.Len(t, e.host.Aborts(), 1)
		assert.Equal(t, []string{"a"}, e.host.Aborts()[0].InFlight)
		assert.Equal(t, recovery.TurnCancelled, e.status())

		// The host verifies the aborted effect; the turn stays cancelled.
		_, err = rec.Reconcile(ctx, caller, ref("a"), verifiedAs("aborted"))
		require.NoError(t, err)
		assert.Equal(t, recovery.TurnCancelled, e.status())
		_, err = rec.Execute(ctx, caller, ref("b"), e.host)
		require.ErrorIs(t, err, refusal.ErrTurnNotRunning)
		assert.Equal(t, 1, e.host.Launches(ref("a")))
		assert.Equal(t, 0, e.host.Launches(ref("b")))
	})

	t.Run("an in-flight result is retained without reopening", func(t *testing.T) {
		e := newEnv(t, nil, nil)
		rec := e.started()
		deliver := make(chan recovery.Result, 1)
		launched := make(chan struct{})
		var launches atomic.Int32
		slow := recovery.LauncherFunc(func(context.Context, recovery.EffectRef) (recovery.Execution, error) {
			launches.Add(1)
			close(launched)
			return chanExec(deliver), nil
		})
		wait := background(ctx, rec, caller, ref("a"), slow)
		<-launched
		canceller, _ := e.worker()
		require.NoError(t, canceller.Cancel(ctx, caller, turn))
		assert.Equal(t, []string{"a"}, e.host.Aborts()[0].InFlight)
		deliver <- result("late")
		res, err := wait()
		require.NoError(t, err)
		assert.Equal(t, "late", string(res.Data))
		assert.Equal(t, recovery.EffectCompleted, e.effect("a").State)
		assert.Equal(t, recovery.TurnCancelled, e.status())
		assert.Equal(t, int32(1), launches.Load())
	})

	t.Run("concurrent race", func(t *testing.T) {
		for i := range 40 {
			var db *recoverytest.DB
			var afterCancel atomic.Int32
			e := newEnv(t, &recoverytest.HostOptions{
				Outcome: okOutcome,
				OnLaunch: func(context.Context, recovery.EffectRef) {
					if rec, _ := db.Snapshot(turn); rec.Status != recovery.TurnRunning {
						afterCancel.Add(1)
					}
				},
			}, nil)
			db = e.db
			rec := e.started()
			canceller, _ := e.worker()
			var wg sync.WaitGroup
			var execErr error
			wg.Go(func() { _, execErr = rec.Execute(ctx, caller, ref("a"), e.host) })
			wg.Go(func() { require.NoError(t, canceller.Cancel(ctx, caller, turn)) })
			wg.Wait()
			n := e.host.Launches(ref("a"))
			require.LessOrEqual(t, n, 1, "round %d", i)
			require.Zero(t, afterCancel.Load(), "round %d: launched after the cancellation committed", i)
			if n == 0 {
				require.ErrorIs(t, execErr, refusal.ErrTurnNotRunning, "round %d", i)
			}
		}
	})
}

// chanExec is an execution that ends when a result arrives, whatever the
// abort hook does.
type chanExec chan recovery.Result

func (c chanExec) Wait(ctx context.Context) (recovery.Result, error) {
	select {
	case r := <-c:
		return r, nil
	case <-ctx.Done():
		return recovery.Result{}, ctx.Err()
	}
}

// R6: duplicate workers race for one effect, and a paused holder wakes
// after another worker took over its expired claim.
func TestR6DuplicateWorkersAndPausedHolder(t *testing.T) {
	ctx := t.Context()

	t.Run("duplicate workers", func(t *testing.T) {
		for i := range 30 {
			e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
			e.started()
			workers := make([]*recovery.TurnRecovery, 4)
			for w := range workers {
				workers[w], _ = e.worker()
			}
			var wg sync.WaitGroup
			results := make([]recovery.Result, len(workers))
			errs := make([]error, len(workers))
			for w, rec := range workers {
				wg.Go(func() { results[w], errs[w] = rec.Execute(ctx, caller, ref("a"), e.host) })
			}
			wg.Wait()
			require.Equal(t, 1, e.host.Launches(ref("a")), "round %d", i)
			stored := e.effect("a")
			for w := range workers {
				if errs[w] == nil {
					assert.True(t, results[w].Equal(stored.Result), "round %d: worker %d returned a result that is not the stored one", i, w)
				} else {
					assert.ErrorIs(t, errs[w], refusal.ErrClaimConflict, "round %d", i)
				}
			}
		}
	})

	t.Run("paused holder", func(t *testing.T) {
		pause := make(chan struct{})
		paused := make(chan struct{})
		var pausedOnce sync.Once
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, &recoverytest.DBOptions{Hook: func(c recoverytest.Call) {
			if c.Op == recoverytest.OpAdmit && c.Worker == "w1" {
				pausedOnce.Do(func() { close(paused); <-pause })
			}
		}})
		holder := e.started() // w1
		wait := background(ctx, holder, caller, ref("a"), e.host)
		<-paused // w1 claimed and is about to admit
		w2, _ := e.worker()
		_, err := w2.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrClaimConflict, "w1's claim is live")
		e.clock.Advance(2 * time.Minute)
		res, err := w2.Execute(ctx, caller, ref("a"), e.host)
		require.NoError(t, err)
		close(pause)
		holderRes, err := wait()
		require.NoError(t, err, "the woken holder reads the stored result")
		assert.True(t, holderRes.Equal(res))
		assert.Equal(t, 1, e.host.Launches(ref("a")))
	})
}

// R7: authority revoked before dispatch: refused before the claim, or by
// the revalidation inside the admission fence after it.
func TestR7AuthorityRevokedBeforeDispatch(t *testing.T) {
	ctx := t.Context()

	t.Run("before the call", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec := e.started()
		e.host.Revoke(caller, turn)
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrUnauthorized)
		assert.Equal(t, recovery.EffectPending, e.effect("a").State)
		assert.Equal(t, 0, e.host.Launches(ref("a")))
	})

	t.Run("between claim and admission", func(t *testing.T) {
		var host *recoverytest.Host
		e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, &recoverytest.DBOptions{Hook: func(c recoverytest.Call) {
			if c.Op == recoverytest.OpAdmit {
				host.Revoke(caller, turn)
			}
		}})
		host = e.host
		rec := e.started()
		_, err := rec.Execute(ctx, caller, ref("a"), e.host)
		require.ErrorIs(t, err, refusal.ErrUnauthorized)
		assert.Equal(t, recovery.EffectClaimed, e.effect("a").State)
		assert.Equal(t, 0, e.host.Launches(ref("a")))
		e.host.Grant("bob", turn)
		e.clock.Advance(2 * time.Minute)
		res, err := rec.Execute(ctx, "bob", ref("a"), e.host)
		require.NoError(t, err, "an authorized caller takes over the expired claim")
		assert.Equal(t, "done:a", string(res.Data))
		assert.Equal(t, 1, e.host.Launches(ref("a")))
	})
}
