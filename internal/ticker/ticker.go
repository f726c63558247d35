// Package ticker runs a function on a fixed interval, the loop behind the
// SSE heartbeat and pgstore's periodic catch-up and trim.
package ticker

import (
	"context"
	"time"
)

// Every calls tick with the tick's time once per interval (a positive
// duration) until ctx ends, stop is closed or tick returns false; a tick that
// runs long delays the next one, never doubles it. A nil stop never closes.
func Every(ctx context.Context, stop <-chan struct{}, interval time.Duration, tick func(now time.Time) bool) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop:
			return
		case now := <-t.C:
			if !tick(now) {
				return
			}
		}
	}
}
