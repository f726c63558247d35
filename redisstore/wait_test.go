package redisstore

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// TestAppendPublishesBounds: every append publishes the turn's bounds as
// stored, which a Wait on another instance returns: the latest seq, the
// lower bound, the end.
func TestAppendPublishesBounds(t *testing.T) {
	addr := needRedis(t)
	writer, c := newTestWindow(t, addr, WindowOptions{MaxFrames: 2})
	reader, _ := newTestWindow(t, addr, WindowOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	key := randomKey("t-told")
	ps := c.Subscribe(ctx, keysOf(testPrefix, key).channel)
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the confirmation
		t.Fatal(err)
	}
	for seq := int64(1); seq <= 3; seq++ {
		waited := make(chan replay.Bounds, 1)
		go func() {
			b, err := reader.Wait(ctx, key, seq-1)
			if err != nil {
				t.Error(err)
			}
			waited <- b
		}()
		if _, err := writer.Append(ctx, key, envelope(key, seq, word(seq), seq == 3)); err != nil {
			t.Fatal(err)
		}
		want := replay.Bounds{Lower: max(seq-2, 0), Latest: seq, Ended: seq == 3}
		if got := <-waited; got != want {
			t.Fatalf("seq %d: Wait returned %v, want %v", seq, got, want)
		}
		msg, err := ps.ReceiveMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := parseBounds(msg.Payload)
		if !ok || got != want {
			t.Fatalf("seq %d: published %q, want %v", seq, msg.Payload, want)
		}
		stored, err := c.Get(ctx, keysOf(testPrefix, key).meta).Result()
		if err != nil || stored != msg.Payload {
			t.Fatalf("seq %d: stored %q (%v), published %q", seq, stored, err, msg.Payload)
		}
	}
	for _, bad := range []string{"", "3", "3 1 2 9", "x 1 0 9", "3 1 0"} {
		if _, ok := parseBounds(bad); ok {
			t.Errorf("parseBounds(%q) accepted", bad)
		}
	}
	if b, ok := parseBounds("12 10 1 " + strconv.Itoa(300)); !ok || b != (replay.Bounds{Lower: 10, Latest: 12, Ended: true}) {
		t.Errorf("parseBounds: %v %v", b, ok)
	}
}

// TestEveryWakeChannel has more waiters on one turn than a watch has wake
// channels: an append wakes every one with the new bounds, and Close
// every one of those waiting again, whatever channel each took.
func TestEveryWakeChannel(t *testing.T) {
	addr := needRedis(t)
	w, _ := newTestWindow(t, addr, WindowOptions{})
	producer, _ := newTestWindow(t, addr, WindowOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	key := randomKey("t-shards")
	const waiters = 3*wakeShards + 1
	type woke struct {
		b   replay.Bounds
		err error
	}
	first, second := make(chan woke, waiters), make(chan woke, waiters)
	for range waiters {
		go func() {
			b, err := w.Wait(ctx, key, 0)
			first <- woke{b, err}
			b, err = w.Wait(ctx, key, b.Latest)
			second <- woke{b, err}
		}()
	}
	time.Sleep(50 * time.Millisecond) // the Waits are waiting
	if _, err := producer.Append(ctx, key, envelope(key, 1, "", false)); err != nil {
		t.Fatal(err)
	}
	for range waiters {
		if got := <-first; got.err != nil || got.b != (replay.Bounds{Latest: 1}) {
			t.Fatalf("a waiter woke with %v, %v", got.b, got.err)
		}
	}
	time.Sleep(50 * time.Millisecond) // the Waits wait again
	w.Close()
	for range waiters {
		select {
		case got := <-second:
			if got.err == nil {
				t.Fatalf("a Wait returned %v on Close", got.b)
			}
		case <-ctx.Done():
			t.Fatal("a Wait outlived Close")
		}
	}
}

// TestSweepBesideWaiters has waiters enter and leave a turn's watch while
// the sweep, with no idle time to wait, runs again and again: no waiter is
// ever counted on a watch the sweep removed, the turn's reads are released
// with the last watch, and a Wait after it all subscribes again and wakes
// on an append.
func TestSweepBesideWaiters(t *testing.T) {
	addr := needRedis(t)
	w, _ := newTestWindow(t, addr, WindowOptions{IdleUnsubscribe: time.Nanosecond, CatchUpInterval: -1})
	producer, _ := newTestWindow(t, addr, WindowOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	key := randomKey("t-sweep")
	s := w.sub
	const removals = 50
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex // guards seen
		seen    = map[*watch]bool{}
		stop    = make(chan struct{})
		stopped = func() bool {
			select {
			case <-stop:
				return true
			default:
				return false
			}
		}
	)
	for range 2 {
		wg.Go(func() {
			for !stopped() {
				wt, _ := s.enter(key)
				s.mu.RLock()
				listed := s.byKey[key] == wt
				s.mu.RUnlock()
				if !listed || wt.waiters.Load() < 1 {
					t.Error("a waiter is counted on a removed watch")
				}
				mu.Lock()
				seen[wt] = true
				mu.Unlock()
				s.leave(wt)
				runtime.Gosched()
			}
		})
	}
	wg.Go(func() {
		for !stopped() {
			s.sweep(time.Now())
		}
	})
	for {
		mu.Lock()
		n := len(seen)
		mu.Unlock()
		if n > removals || t.Failed() {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the sweep removed the watch %d times", n-1)
		case <-time.After(time.Millisecond):
		}
	}
	close(stop)
	wg.Wait()
	s.sweep(time.Now()) // the watch is idle,
	s.sweep(time.Now()) // and removed
	s.mu.RLock()
	left := len(s.byKey)
	s.mu.RUnlock()
	w.fetches.mu.RLock()
	reads := len(w.fetches.turns)
	w.fetches.mu.RUnlock()
	if left != 0 || reads != 0 {
		t.Fatalf("after the last sweep: %d watches, %d turns' reads", left, reads)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := w.Wait(ctx, key, 0)
		waited <- err
	}()
	numsub := func() int64 {
		channel := keysOf(testPrefix, key).channel
		n, err := producer.client.PubSubNumSub(ctx, channel).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n[channel]
	}
	for numsub() != 1 { // the subscription's confirmation would wake it too
		select {
		case <-ctx.Done():
			t.Fatal("the Window did not subscribe again")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if _, err := producer.Append(ctx, key, envelope(key, 1, "", false)); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
}
