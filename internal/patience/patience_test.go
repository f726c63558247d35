package patience_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/Papercusp/chat-protocol-go/internal/patience"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
)

var (
	errDown    = errors.New("down")
	errRefused = errors.New("refused")
	errClosed  = errors.New("closed")
)

func unreachable(err error) bool { return errors.Is(err, errDown) }

// TestRetry: an unreachable store is tried again until it answers, until
// the patience runs out, or until the window closes; any other error, and
// a negative patience, end at the first try.
func TestRetry(t *testing.T) {
	bg := context.Background()
	calls := 0
	downTwice := func() error {
		if calls++; calls <= 2 {
			return errDown
		}
		return nil
	}
	assert.NoError(t, patience.Retry(bg, bg, errClosed, time.Second, unreachable, downTwice))
	assert.Equal(t, 3, calls)

	calls = 0
	always := func(err error) func() error { return func() error { calls++; return err } }
	assert.ErrorIs(t, patience.Retry(bg, bg, errClosed, time.Second, unreachable, always(errRefused)), errRefused)
	assert.Equal(t, 1, calls)
	calls = 0
	assert.ErrorIs(t, patience.Retry(bg, bg, errClosed, -1, unreachable, always(errDown)), errDown)
	assert.Equal(t, 1, calls)

	calls = 0
	start := time.Now()
	assert.ErrorIs(t, patience.Retry(bg, bg, errClosed, 100*time.Millisecond, unreachable, always(errDown)), errDown)
	assert.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
	assert.Greater(t, calls, 2)

	closed, close := context.WithCancel(bg)
	close()
	assert.ErrorIs(t, patience.Retry(bg, closed, errClosed, time.Minute, unreachable, always(errDown)), errClosed)
	done, cancel := context.WithCancel(bg)
	cancel()
	assert.ErrorIs(t, patience.Sleep(done, bg, errClosed, time.Minute), context.Canceled)
}
