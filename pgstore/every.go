package pgstore

import (
	"context"
	"time"
)

// every calls tick once per interval (a positive duration) until ctx
// ends; a tick that runs long delays the next one, never doubles it.
func every(ctx context.Context, interval time.Duration, tick func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			tick()
		}
	}
}
