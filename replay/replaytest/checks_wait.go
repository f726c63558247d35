package replaytest

import (
	"context"
	"errors"
	"math"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// waitResult is what a Wait returned.
type waitResult struct {
	b   replay.Bounds
	err error
}

// waitReturns calls Wait, which must return within Timeout.
func (r *run) waitReturns(key replay.Key, after int64) (replay.Bounds, error) {
	ctx, cancel := context.WithTimeout(r.ctx, r.cfg.Timeout)
	defer cancel()
	b, err := r.w.Wait(ctx, key, after)
	if err != nil {
		return b, failf("Wait after %d did not return within %v: %w", after, r.cfg.Timeout, err)
	}
	return b, nil
}

// waitBlocks calls Wait with a context done after Block: it must block
// until then and return the context's error.
func (r *run) waitBlocks(key replay.Key, after int64) error {
	ctx, cancel := context.WithTimeout(r.ctx, r.cfg.Block)
	defer cancel()
	b, err := r.w.Wait(ctx, key, after)
	if !errors.Is(err, context.DeadlineExceeded) {
		return failf("Wait after %d returned %v, %v; want it blocked until its context ended", after, b, err)
	}
	return nil
}

// waitLater starts a Wait given Timeout and checks that it is still
// blocked after Block; the channel delivers its result.
func (r *run) waitLater(key replay.Key, after int64) (<-chan waitResult, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(r.ctx, r.cfg.Timeout)
	done := make(chan waitResult, 1)
	go func() {
		b, err := r.w.Wait(ctx, key, after)
		done <- waitResult{b, err}
	}()
	select {
	case res := <-done:
		cancel()
		return nil, nil, failf("Wait after %d returned %v, %v while nothing was appended", after, res.b, res.err)
	case <-time.After(r.cfg.Block):
	}
	return done, cancel, nil
}

// woken receives the result of a Wait started by waitLater, which must
// come within Timeout and report want.
func (r *run) woken(done <-chan waitResult, cancel context.CancelFunc, want replay.Bounds) error {
	defer cancel()
	res := <-done // the Wait's own context ends it after Timeout
	if res.err != nil {
		return failf("Wait was not woken within %v: %w", r.cfg.Timeout, res.err)
	}
	if res.b != want {
		return failf("Wait woke with bounds %v, want %v", res.b, want)
	}
	return nil
}

// wokenBy starts a Wait on key after after (waitLater), then appends evs
// from seq after+1 on and checks that they wake it with want (woken).
func (r *run) wokenBy(key replay.Key, after int64, want replay.Bounds, evs ...chatprotocol.Event) error {
	done, cancel, err := r.waitLater(key, after)
	if err != nil {
		return err
	}
	if _, err := r.appendTurn(key, int64(after)+1, evs...); err != nil {
		cancel()
		return err
	}
	return r.woken(done, cancel, want)
}

// checkWaitLostWakeup: a frame appended between a reader's Read and its
// Wait makes the Wait return at once.
func checkWaitLostWakeup(r *run) error {
	key := r.key("lost-wakeup")
	if _, err := r.appendTurn(key, 1, turnEvents(1)...); err != nil {
		return err
	}
	b, frames, err := r.w.Read(r.ctx, key, 0, math.MaxInt)
	if err != nil || len(frames) != 1 {
		return failf("Read after 0: %v, %d frames, %v", b, len(frames), err)
	}
	if _, err := r.appendTurn(key, 2, &chatprotocol.DeltaEvent{Text: "between"}); err != nil {
		return err
	}
	got, err := r.waitReturns(key, 1)
	if err != nil {
		return failf("the frame appended between Read and Wait was lost: %w", err)
	}
	if got != (replay.Bounds{Latest: 2}) {
		return failf("Wait after 1 returned %v, want (0, 2]", got)
	}
	return nil
}

// checkWaitWakesOnAppend: a Wait at the latest frame blocks, and the next
// append wakes it.
func checkWaitWakesOnAppend(r *run) error {
	key := r.key("wakes")
	if _, err := r.appendTurn(key, 1, turnEvents(2)...); err != nil {
		return err
	}
	return r.wokenBy(key, 2, replay.Bounds{Latest: 3}, &chatprotocol.DeltaEvent{Text: "wake"})
}

// checkWaitWakesOnEnd: the frame that ends the turn wakes a Wait, and a
// Wait at the end returns at once.
func checkWaitWakesOnEnd(r *run) error {
	key := r.key("wakes-on-end")
	if _, err := r.appendTurn(key, 1, turnEvents(1)...); err != nil {
		return err
	}
	end := replay.Bounds{Latest: 2, Ended: true}
	if err := r.wokenBy(key, 1, end, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}); err != nil {
		return err
	}
	if got, err := r.waitReturns(key, 2); err != nil || got != end {
		return failf("Wait at the end: %v, %v; want %v at once", got, err, end)
	}
	return nil
}

// checkWaitUnknownTurn: a Wait on a turn not yet started waits for its
// first frame.
func checkWaitUnknownTurn(r *run) error {
	key := r.key("not-yet")
	return r.wokenBy(key, 0, replay.Bounds{Latest: 1}, turnEvents(1)...)
}

// checkWaitContext: a Wait ends, with the context's error, when its
// context is cancelled or its deadline passes, and a Wait with a context
// already done does not block.
func checkWaitContext(r *run) error {
	key := r.key("context")
	if _, err := r.appendTurn(key, 1, turnEvents(1)...); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(r.ctx)
	done := make(chan error, 1)
	go func() {
		_, err := r.w.Wait(ctx, key, 1)
		done <- err
	}()
	<-time.After(r.cfg.Block)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			return failf("a cancelled Wait returned %v, want context.Canceled", err)
		}
	case <-time.After(r.cfg.Timeout):
		return failf("a cancelled Wait did not return within %v", r.cfg.Timeout)
	}
	if err := r.waitBlocks(key, 1); err != nil {
		return err
	}
	gone, cancelGone := context.WithCancel(r.ctx)
	cancelGone()
	if _, err := r.w.Wait(gone, key, 1); !errors.Is(err, context.Canceled) {
		return failf("a Wait with a cancelled context returned %v, want context.Canceled", err)
	}
	return nil
}
