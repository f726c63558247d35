// Package fakeclock is the fake clock shared by the module's public test
// kits (package interactionstest's Clock is this type) and by its own
// tests: it stands still until told to move, so expiries and leases are
// driven by the test, never by the wall clock. It lives outside
// internal/testkit, which only the module's own tests import, because a
// public kit exposes it.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a fake clock: Now returns the time it was set to until Advance
// moves it. It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a Clock reading start.
func New(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (backward when d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
