// Package patience retries a store's call while its store is unreachable,
// for a bounded time, as the replay windows on PostgreSQL and on Redis do
// (docs/contract.md section 11.8).
package patience

import (
	"context"
	"time"
)

// The pauses between two tries: the first, doubled after each try up to
// the last.
const (
	firstPause = 20 * time.Millisecond
	lastPause  = 500 * time.Millisecond
)

// Retry calls op until it succeeds, fails with an error unreachable does
// not take, ctx ends, or patience has passed since its first failure,
// pausing between tries (see [Sleep]); it returns op's last error, or the
// pause's. A negative patience tries once.
func Retry(ctx, closed context.Context, closedErr error, patience time.Duration, unreachable func(error) bool, op func() error) error {
	var since time.Time
	for pause := firstPause; ; pause = min(2*pause, lastPause) {
		err := op()
		if err == nil || ctx.Err() != nil || !unreachable(err) || patience < 0 {
			return err
		}
		if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) > patience {
			return err
		}
		if err := Sleep(ctx, closed, closedErr, pause); err != nil {
			return err
		}
	}
}

// Sleep waits d, or until ctx ends (its error) or closed does (closedErr).
func Sleep(ctx, closed context.Context, closedErr error, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-closed.Done():
		return closedErr
	case <-t.C:
		return nil
	}
}

// Pause waits d, or until ctx ends: then it returns ctx's cause
// ([context.Cause]), so that a caller tells why (a turn's cancellation from
// a host's stop). A model loop's and a follower's backoffs wait with it.
func Pause(ctx context.Context, d time.Duration) error {
	if err := Sleep(ctx, context.Background(), nil, d); err != nil {
		return context.Cause(ctx)
	}
	return nil
}
