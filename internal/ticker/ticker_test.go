package ticker

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
)

func TestEveryTicksUntilCtxEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		var at []time.Duration
		go func() {
			time.Sleep(3500 * time.Millisecond)
			cancel()
		}()
		Every(ctx, nil, time.Second, func(now time.Time) bool {
			at = append(at, now.Sub(start))
			return true
		})
		assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, at)
		assert.Equal(t, 3500*time.Millisecond, time.Since(start), "Every returns when ctx ends")
	})
}

func TestEveryStops(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := make(chan struct{})
		start := time.Now()
		go func() {
			time.Sleep(2500 * time.Millisecond)
			close(stop)
		}()
		n := 0
		Every(t.Context(), stop, time.Second, func(time.Time) bool { n++; return true })
		assert.Equal(t, 2, n)
		assert.Equal(t, 2500*time.Millisecond, time.Since(start), "Every returns when stop is closed")

		n = 0
		Every(t.Context(), nil, time.Second, func(time.Time) bool { n++; return n < 4 })
		assert.Equal(t, 4, n, "Every returns after the tick that returns false")
	})
}

func TestEverySlowTickDelaysTheNext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var ticks, runs []time.Duration
		Every(t.Context(), nil, time.Second, func(now time.Time) bool {
			ticks = append(ticks, now.Sub(start))
			runs = append(runs, time.Since(start))
			time.Sleep(2500 * time.Millisecond) // spans two ticks: one waits, one is dropped
			return len(ticks) < 3
		})
		assert.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, ticks)
		assert.Equal(t, []time.Duration{time.Second, 3500 * time.Millisecond, 6 * time.Second}, runs, "one tick at a time, right after the slow one")
	})
}
