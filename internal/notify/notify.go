// Package notify lets goroutines wait, under a context, for a condition on
// state that a mutex guards: what [sync.Cond] does, except that a wait also
// ends with its context.
package notify

import (
	"context"
	"sync"
)

// Signal wakes the goroutines waiting in Wait. The mutex that guards the
// state the condition reads guards the Signal too. The zero value is ready;
// a Signal must not be copied after first use.
type Signal struct {
	ch chan struct{} // made by the first waiter, closed by Broadcast
}

// Broadcast wakes every waiting goroutine, so that each checks its condition
// again. Call it with the mutex held, after changing the state; without a
// waiter it does nothing.
func (s *Signal) Broadcast() {
	if s.ch != nil {
		close(s.ch)
		s.ch = nil
	}
}

// Wait blocks until cond holds or ctx ends, and returns nil then, or ctx's
// error. mu guards s and the state cond reads: Wait calls cond with mu held
// and releases mu while it waits, so call it without holding mu. cond is
// checked first, then after each Broadcast.
func (s *Signal) Wait(ctx context.Context, mu sync.Locker, cond func() bool) error {
	for {
		mu.Lock()
		if cond() {
			mu.Unlock()
			return nil
		}
		if s.ch == nil {
			s.ch = make(chan struct{})
		}
		ch := s.ch
		mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
