package recovery_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func TestGoReturnsFnsOutcome(t *testing.T) {
	leakCheck(t)
	boom := errors.New("tool failed")
	for _, tt := range []struct {
		res recovery.Result
		err error
	}{{result("ok"), nil}, {recovery.Result{}, boom}} {
		var calls atomic.Int32
		exec := recovery.Go(t.Context(), func(context.Context) (recovery.Result, error) {
			calls.Add(1)
			return tt.res, tt.err
		})
		for range 3 {
			res, err := exec.Wait(t.Context())
			assert.Equal(t, tt.res, res)
			assert.Equal(t, tt.err, err)
		}
		assert.Equal(t, int32(1), calls.Load(), "fn runs once")
	}
}

// TestGoWaitEndsWithItsContext: a Wait whose ctx ends returns its error
// while fn goes on; a later Wait gets fn's outcome.
func TestGoWaitEndsWithItsContext(t *testing.T) {
	leakCheck(t)
	release := make(chan struct{})
	exec := recovery.Go(t.Context(), func(context.Context) (recovery.Result, error) {
		<-release
		return result("late"), nil
	})
	waitCtx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := exec.Wait(waitCtx)
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, res)

	close(release)
	res, err = exec.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, result("late"), res)
	res, err = exec.Wait(waitCtx)
	require.NoError(t, err, "an outcome already known wins over an ended ctx")
	assert.Equal(t, result("late"), res)
}

// TestGoGivesFnTheDispatchContext: cancelling the dispatch context (the
// host's abort) reaches fn, whose answer Wait returns.
func TestGoGivesFnTheDispatchContext(t *testing.T) {
	leakCheck(t)
	aborted := errors.New("aborted by the host")
	dispatch, abort := context.WithCancelCause(context.Background())
	started := make(chan struct{})
	exec := recovery.Go(dispatch, func(ctx context.Context) (recovery.Result, error) {
		close(started)
		<-ctx.Done()
		return recovery.Result{}, context.Cause(ctx)
	})
	<-started
	abort(aborted)
	_, err := exec.Wait(t.Context())
	assert.ErrorIs(t, err, aborted)
}

// TestGoRecoversAPanic: a panic, or a Goexit, in fn is an unknown
// outcome, not the end of the process.
func TestGoRecoversAPanic(t *testing.T) {
	leakCheck(t)
	for name, fn := range map[string]func(context.Context) (recovery.Result, error){
		"panic":  func(context.Context) (recovery.Result, error) { panic("tool bug") },
		"goexit": func(context.Context) (recovery.Result, error) { runtime.Goexit(); return result("never"), nil },
	} {
		res, err := recovery.Go(t.Context(), fn).Wait(t.Context())
		require.ErrorIs(t, err, recovery.ErrExecutionPanicked, name)
		assert.Zero(t, res, name)
		if name == "panic" {
			assert.Contains(t, err.Error(), "tool bug", "the panic value is kept for the logs")
		}
	}
}

func TestGoConcurrentWaits(t *testing.T) {
	leakCheck(t)
	release := make(chan struct{})
	exec := recovery.Go(t.Context(), func(context.Context) (recovery.Result, error) {
		<-release
		return result("shared"), nil
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			res, err := exec.Wait(t.Context())
			assert.NoError(t, err)
			assert.Equal(t, result("shared"), res)
		})
	}
	close(release)
	wg.Wait()
}

// TestGoWithTurnRecovery: a launcher of Go runs a synchronous tool once,
// and a tool that fails after the abort leaves the effect to
// reconciliation.
func TestGoWithTurnRecovery(t *testing.T) {
	e := newEnv(t, nil, nil)
	rec := e.started()
	dispatch, abort := context.WithCancel(context.Background())
	defer abort()
	var runs atomic.Int32
	launcher := recovery.LauncherFunc(func(_ context.Context, effect recovery.EffectRef) (recovery.Execution, error) {
		return recovery.Go(dispatch, func(ctx context.Context) (recovery.Result, error) {
			runs.Add(1)
			if effect.Effect == "b" {
				abort() // as the host's Aborter would, mid-call
				<-ctx.Done()
				return recovery.Result{}, ctx.Err()
			}
			return result("charged " + effect.Effect), nil
		}), nil
	})
	for range 2 {
		res, err := rec.Execute(t.Context(), caller, ref("a"), launcher)
		require.NoError(t, err)
		assert.Equal(t, result("charged a"), res)
	}
	_, err := rec.Execute(t.Context(), caller, ref("b"), launcher)
	require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
	assert.Equal(t, int32(2), runs.Load(), "each effect ran once")
	assert.Equal(t, recovery.EffectCompleted, e.effect("a").State)
	assert.NotEqual(t, recovery.EffectCompleted, e.effect("b").State)
}
