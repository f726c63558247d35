package recovery

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
)

// ErrExecutionPanicked is the error Wait returns, wrapped with the panic
// value and the goroutine's stack, for an execution started by Go whose fn
// panicked or exited its goroutine ([runtime.Goexit]) without returning: the
// effect's outcome is unknown, so Execute reports needs-reconciliation.
var ErrExecutionPanicked = errors.New("recovery: the execution's function did not return")

// Go starts fn on a goroutine of its own and returns its Execution: the
// Execution a Launcher returns for a tool that runs synchronously, in
// place of a type of the host's own.
//
//	launcher := recovery.LauncherFunc(func(_ context.Context, e recovery.EffectRef) (recovery.Execution, error) {
//		return recovery.Go(host.Dispatch(e.Turn), func(ctx context.Context) (recovery.Result, error) {
//			return payments.Charge(ctx, e.Effect)
//		}), nil
//	})
//
// ctx is the dispatch context, which fn receives: a context the host owns
// and its Aborter cancels (see Launcher), never the ctx Launch is given,
// which ends when Launch returns. It must not be nil. Cancelling it is how
// the host's abort reaches fn.
//
// The goroutine lives until fn returns, which fn must once ctx is done; Go
// never blocks and never fails. Wait returns what fn returned, or its own
// ctx's error first (fn goes on), the same outcome to every caller. A
// panic in fn (or a [runtime.Goexit]) is recovered: Wait returns an error
// wrapping [ErrExecutionPanicked] with the panic value and stack.
func Go(ctx context.Context, fn func(ctx context.Context) (Result, error)) Execution {
	e := &goExecution{done: make(chan struct{})}
	go e.run(ctx, fn)
	return e
}

// goExecution is the Execution of Go. res and err are written once, by
// run, before done is closed, and read only after.
type goExecution struct {
	done chan struct{}
	res  Result
	err  error
}

// run calls fn and publishes its outcome.
func (e *goExecution) run(ctx context.Context, fn func(context.Context) (Result, error)) {
	returned := false
	defer func() {
		if !returned {
			p := recover() // nil for runtime.Goexit
			e.res, e.err = Result{}, fmt.Errorf("%w: panic: %v\n%s", ErrExecutionPanicked, p, debug.Stack())
		}
		close(e.done)
	}()
	e.res, e.err = fn(ctx)
	returned = true
}

// Wait returns fn's outcome once fn has returned, or ctx's error if ctx
// ends first; an outcome already known is returned even if ctx has ended.
func (e *goExecution) Wait(ctx context.Context) (Result, error) {
	select {
	case <-e.done:
		return e.res, e.err
	default:
	}
	select {
	case <-e.done:
		return e.res, e.err
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}
