package serve

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// read reads the page of key's turn after cursor. Each Read is bounded by
// WindowTimeout: while the window stalls, beat sends a heartbeat each
// HeartbeatInterval (from a timer, while the Read is in flight) and at each
// timeout, and the page is read again (docs/contract.md section 14.2). A nil
// beat sends none. It returns the window's error, ctx's, or a heartbeat's.
func (e *Engine) read(ctx context.Context, key replay.Key, cursor int64, beat func() error) (replay.Bounds, []replay.Frame, error) {
	var bt *beater
	if beat != nil && e.set.heartbeat > 0 {
		bt = &beater{beat: beat, every: e.set.heartbeat}
	}
	for {
		rctx, cancel := e.Bounded(ctx)
		bt.arm(cancel)
		b, frames, err := e.window.Read(rctx, key, cursor, e.set.page)
		beatErr := bt.disarm()
		stalled := err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded)
		cancel()
		switch {
		case beatErr != nil:
			return b, nil, beatErr
		case stalled && beat != nil:
			if err := beat(); err != nil {
				return b, nil, err
			}
		case err != nil:
			if ctx.Err() == nil && e.closing.Err() == nil {
				e.set.log.WarnContext(ctx, "serve: reading the window failed", "after", cursor, "err", err)
			}
			return b, nil, err
		default:
			return b, frames, nil
		}
	}
}

// beater sends a stream's heartbeats from a timer while a window call is in
// flight, so that a stall longer than the heartbeat interval still beats on
// time. Its methods do nothing on a nil beater.
type beater struct {
	beat  func() error
	every time.Duration

	mu     sync.Mutex // held by a beat, and by disarm: no beat outlives disarm
	timer  *time.Timer
	armed  bool
	err    error
	cancel context.CancelFunc // ends the call in flight when a beat fails
}

// arm starts the timer for one call, cancel its context.
func (b *beater) arm(cancel context.CancelFunc) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed, b.cancel = true, cancel
	if b.timer == nil {
		b.timer = time.AfterFunc(b.every, b.fire)
	} else {
		b.timer.Reset(b.every)
	}
}

// fire sends one heartbeat and arms the next, unless the call is over.
func (b *beater) fire() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.armed || b.err != nil {
		return
	}
	if b.err = b.beat(); b.err != nil {
		b.cancel()
		return
	}
	b.timer.Reset(b.every)
}

// disarm stops the timer and returns the error of a heartbeat that failed
// during the call.
func (b *beater) disarm() error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.armed = false
	b.timer.Stop()
	err := b.err
	b.err = nil
	return err
}

// wait waits for a frame after cursor or the end of key's turn, sending a
// heartbeat with beat each time HeartbeatInterval passes without one. It
// returns the window's error, ctx's, or a heartbeat's.
func (e *Engine) wait(ctx context.Context, key replay.Key, cursor int64, beat func() error) error {
	for {
		idle, err := e.waitOnce(ctx, key, cursor)
		if !idle {
			if err != nil && ctx.Err() == nil && e.closing.Err() == nil {
				e.set.log.WarnContext(ctx, "serve: waiting on the window failed", "after", cursor, "err", err)
			}
			return err
		}
		if err := beat(); err != nil {
			return err
		}
	}
}

// waitOnce waits on the window at most HeartbeatInterval; idle reports that
// the interval passed with nothing to tell.
func (e *Engine) waitOnce(ctx context.Context, key replay.Key, cursor int64) (idle bool, err error) {
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if e.set.heartbeat > 0 {
		wctx, cancel = context.WithTimeout(ctx, e.set.heartbeat)
	}
	defer cancel()
	_, err = e.window.Wait(wctx, key, cursor)
	idle = err != nil && ctx.Err() == nil && errors.Is(wctx.Err(), context.DeadlineExceeded)
	return idle, err
}
