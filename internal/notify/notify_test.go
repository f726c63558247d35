package notify

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
)

func TestWaitReturnsOnceTheConditionHolds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu    sync.Mutex
			sig   Signal
			n     int
			calls int
		)
		go func() {
			for range 3 {
				time.Sleep(time.Second)
				mu.Lock()
				n++
				sig.Broadcast()
				mu.Unlock()
			}
		}()
		start := time.Now()
		err := sig.Wait(t.Context(), &mu, func() bool { calls++; return n == 3 })
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		assert.Equal(t, 4, calls, "cond is checked first and after each of the three broadcasts")
		assert.Equal(t, 3*time.Second, time.Since(start))
	})
}

func TestWaitHoldingAtOnce(t *testing.T) {
	var mu sync.Mutex
	var sig Signal
	require.NoError(t, sig.Wait(t.Context(), &mu, func() bool { return true }))
	assert.Nil(t, sig.ch, "a wait whose condition holds makes no channel")
	sig.Broadcast() // without a waiter: nothing to wake
	assert.True(t, mu.TryLock(), "Wait released the mutex")
}

func TestWaitEndsWithCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var sig Signal
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		start := time.Now()
		err := sig.Wait(ctx, &mu, func() bool { return false })
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Equal(t, 2*time.Second, time.Since(start))
		assert.True(t, mu.TryLock(), "Wait released the mutex")
	})
}
