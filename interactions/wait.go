package interactions

import (
	"context"
	"sync"
	"time"
)

// waiters are the in-process waiters of Wait, one broadcast channel per
// card: Notify closes it, and the next Wait makes a new one.
type waiters struct {
	mu sync.Mutex
	m  map[Key]*waiter
}

// waiter is the channel of one card and the count of Waits holding it.
type waiter struct {
	ch chan struct{}
	n  int
}

// watch returns the channel that Notify(key) closes, and its release.
func (w *waiters) watch(key Key) (<-chan struct{}, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[Key]*waiter{}
	}
	wt := w.m[key]
	if wt == nil {
		wt = &waiter{ch: make(chan struct{})}
		w.m[key] = wt
	}
	wt.n++
	return wt.ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if wt.n--; wt.n == 0 && w.m[key] == wt {
			delete(w.m, key)
		}
	}
}

// notify wakes every Wait of key.
func (w *waiters) notify(key Key) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wt := w.m[key]; wt != nil {
		close(wt.ch)
		delete(w.m, key)
	}
}

// notifyAll wakes every Wait of every card.
func (w *waiters) notifyAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for key, wt := range w.m {
		close(wt.ch)
		delete(w.m, key)
	}
}

// closed wakes the card's waiters, then tells the host.
func (r *Resolver) closed(ctx context.Context, key Key, res Result) {
	r.waiters.notify(key)
	if r.onClose != nil {
		r.onClose(ctx, res)
	}
}

// Notify wakes the Waits of the card under key in this process, which then
// read the card again: a host with several instances calls it when another
// instance reports a close ([Options.OnClose] there, carried by its store,
// such as PostgreSQL's LISTEN/NOTIFY). A Notify for a card still pending
// changes nothing.
func (r *Resolver) Notify(key Key) { r.waiters.notify(key) }

// NotifyAll wakes every Wait in this process, which then reads its card
// again: a host calls it when closes may have been reported while it was
// not listening (its listener reconnected), so that none waits on a card
// already closed (docs/contract.md section 13.2, item 8).
func (r *Resolver) NotifyAll() { r.waiters.notifyAll() }

// Wait blocks until the card under key is closed, and returns it as Lookup
// does: its effective status is terminal (docs/contract.md section 13.2).
// It reads the card once, then again each time this Resolver closes it,
// Notify is called for it, or its deadline passes (by the real clock), so
// it costs no polling; a card closed already returns at once. A card past
// its deadline returns with Status expired even before Expire stores it.
//
// Like Lookup it checks no person's authority: it is for the backend (a
// turn waiting for its answer). Errors: those of Lookup, and ctx's error.
func (r *Resolver) Wait(ctx context.Context, key Key) (View, error) {
	for {
		woken, release := r.waiters.watch(key)
		v, err := r.Lookup(ctx, key)
		if err != nil || v.Status.Terminal() {
			release()
			return v, err
		}
		var deadline <-chan time.Time
		stop := func() bool { return false }
		if v.Record.ExpiresAt > 0 {
			t := time.NewTimer(time.Duration(v.Record.ExpiresAt-r.now()) * time.Millisecond)
			deadline, stop = t.C, t.Stop
		}
		select {
		case <-woken:
		case <-deadline:
		case <-ctx.Done():
			err = ctx.Err()
		}
		stop()
		release()
		if err != nil {
			return View{}, err
		}
	}
}
