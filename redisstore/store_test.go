package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

func TestKeysEscaped(t *testing.T) {
	a := keysOf("p:", replay.Key{ConversationID: "a:b", TurnID: "c"})
	b := keysOf("p:", replay.Key{ConversationID: "a", TurnID: "b:c"})
	if a.channel != channelOf("p:", replay.Key{ConversationID: "a:b", TurnID: "c"}) {
		t.Fatalf("channelOf differs from keysOf: %q", a.channel)
	}
	if a.frames == b.frames || a.meta == b.meta || a.channel == b.channel {
		t.Fatalf("two turns share keys: %+v %+v", a, b)
	}
	c := keysOf("p:", replay.Key{ConversationID: "x}{y%", TurnID: "t"})
	if want := "p:{x%7D%7By%25:t}:f"; c.frames != want {
		t.Fatalf("frames key %q, want %q", c.frames, want)
	}
	// Every key of a turn has one hash tag: the text between the first
	// braces.
	for _, k := range []string{c.frames, c.meta, c.channel} {
		open, shut := strings.IndexByte(k, '{'), strings.IndexByte(k, '}')
		if tag := k[open+1 : shut]; tag != "x%7D%7By%25:t" {
			t.Fatalf("hash tag of %q is %q", k, tag)
		}
	}
}

// TestConcurrentWriters races two windows, each on a client of its own,
// appending the same seqs to one turn: each seq is stored once, the loser
// refused with sequence-reordered, and the turn holds 1..n without a gap.
func TestConcurrentWriters(t *testing.T) {
	addr := needRedis(t)
	w1, _ := newTestWindow(t, addr, WindowOptions{})
	w2, _ := newTestWindow(t, addr, WindowOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	key := randomKey("t-race")
	const n = 200
	var wins [2]int
	var wg sync.WaitGroup
	for i, w := range []*Window{w1, w2} {
		wg.Go(func() {
			for seq := int64(1); seq <= n; seq++ {
				_, err := w.Append(ctx, key, envelope(key, seq, word(seq), seq == n))
				switch {
				case err == nil:
					wins[i]++
				case refusal.CodeOf(err) == refusal.CodeSequenceReordered:
				default:
					t.Errorf("writer %d, seq %d: %v", i, seq, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if wins[0]+wins[1] != n {
		t.Fatalf("%d and %d appends stored, want %d in all", wins[0], wins[1], n)
	}
	b, frames, err := w1.Read(ctx, key, 0, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if b != (replay.Bounds{Lower: 0, Latest: n, Ended: true}) || len(frames) != n {
		t.Fatalf("bounds %v, %d frames", b, len(frames))
	}
	for i, f := range frames {
		if f.Seq != int64(i+1) {
			t.Fatalf("frame %d has seq %d", i, f.Seq)
		}
	}
}

// TestAppendAgain appends a frame whose acknowledgement was lost once
// more: refused as sequence-reordered with the bounds that show it landed.
func TestAppendAgain(t *testing.T) {
	addr := needRedis(t)
	w, _ := newTestWindow(t, addr, WindowOptions{})
	ctx := t.Context()
	key := randomKey("t-again")
	env := envelope(key, 1, "", false)
	if _, err := w.Append(ctx, key, env); err != nil {
		t.Fatal(err)
	}
	_, err := w.Append(ctx, key, env)
	ae, ok := errors.AsType[*replay.AppendError](err)
	if !ok || !errors.Is(err, refusal.ErrSequenceReordered) || ae.Bounds != (replay.Bounds{Latest: 1}) {
		t.Fatalf("second append: %v", err)
	}
	_, err = w.Append(ctx, key, envelope(key, 3, word(3), false))
	if refusal.CodeOf(err) != refusal.CodeSequenceGap {
		t.Fatalf("append of seq 3 after 1: %v", err)
	}
}

// TestByteRetention keeps three frames' worth of bytes: the oldest frames
// go, Lower moves past them, a cursor below it is stale-cursor with the
// bounds, and the hash's byte count is the retained frames' sum.
func TestByteRetention(t *testing.T) {
	addr := needRedis(t)
	key := randomKey("t-bytes")
	probe, err := replay.EncodeFrame(envelope(key, 10, strings.Repeat("x", 100), false), 0) // the size of seqs 10 to 99
	if err != nil {
		t.Fatal(err)
	}
	w, c := newTestWindow(t, addr, WindowOptions{MaxBytes: 3 * len(probe.Data)})
	ctx := t.Context()
	const n = 20
	for seq := int64(1); seq <= n; seq++ {
		if _, err := w.Append(ctx, key, envelope(key, seq, strings.Repeat("x", 100), false)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := w.Bounds(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if b != (replay.Bounds{Lower: n - 3, Latest: n}) {
		t.Fatalf("bounds %v, want (17, 20]", b)
	}
	_, _, err = w.Read(ctx, key, 0, 1<<20)
	ce, ok := errors.AsType[*replay.CursorError](err)
	if !ok || refusal.CodeOf(err) != refusal.CodeStaleCursor || ce.Bounds != b {
		t.Fatalf("read after 0: %v", err)
	}
	_, frames, err := w.Read(ctx, key, b.Lower, 1<<20)
	if err != nil || len(frames) != 3 || frames[0].Seq != n-2 {
		t.Fatalf("read after Lower: %d frames, %v", len(frames), err)
	}
	k := keysOf(testPrefix, key)
	if got, err := c.Get(ctx, k.meta).Result(); err != nil || got != fmt.Sprintf("%d %d 0 %d", n, n-3, 3*len(probe.Data)) {
		t.Fatalf("bounds %q (%v), want %d bytes", got, err, 3*len(probe.Data))
	}
	if got, err := c.XLen(ctx, k.frames).Result(); err != nil || got != 3 {
		t.Fatalf("XLEN %d (%v), want 3", got, err)
	}
	// A frame larger than the byte bound is kept alone.
	if _, err := w.Append(ctx, key, envelope(key, n+1, strings.Repeat("z", 1000), false)); err != nil {
		t.Fatal(err)
	}
	if b, _ := w.Bounds(ctx, key); b != (replay.Bounds{Lower: n, Latest: n + 1}) {
		t.Fatalf("bounds after a large frame %v", b)
	}
	// A page smaller than a frame holds that frame alone.
	_, frames, err = w.Read(ctx, key, n, 1)
	if err != nil || len(frames) != 1 || frames[0].Seq != n+1 {
		t.Fatalf("a page of one byte: %d frames, %v", len(frames), err)
	}
}

// TestEndedExpiry ends a turn on a window with a short EndedTTL: its
// frames expire, its bounds stay with Lower = Latest, a reader resuming
// from an older cursor is told stale-cursor, and a late tool_result is
// still refused only by the end rule.
func TestEndedExpiry(t *testing.T) {
	addr := needRedis(t)
	w, c := newTestWindow(t, addr, WindowOptions{EndedTTL: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	key := randomKey("t-ended")
	for seq := int64(1); seq <= 3; seq++ {
		if _, err := w.Append(ctx, key, envelope(key, seq, word(seq), seq == 3)); err != nil {
			t.Fatal(err)
		}
	}
	k := keysOf(testPrefix, key)
	for {
		n, err := c.Exists(ctx, k.frames).Result()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the ended turn's stream did not expire")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if ttl, err := c.PTTL(ctx, k.meta).Result(); err != nil || ttl < time.Hour {
		t.Fatalf("the bounds expire in %v (%v)", ttl, err)
	}
	b, _, err := w.Read(ctx, key, 1, 1<<20)
	if refusal.CodeOf(err) != refusal.CodeStaleCursor || b != (replay.Bounds{Lower: 3, Latest: 3, Ended: true}) {
		t.Fatalf("read after 1: %v, %v", b, err)
	}
	if _, frames, err := w.Read(ctx, key, 3, 1<<20); err != nil || len(frames) != 0 {
		t.Fatalf("read after 3: %d frames, %v", len(frames), err)
	}
	if _, err := w.Append(ctx, key, envelope(key, 4, word(4), false)); refusal.CodeOf(err) != refusal.CodeTurnTerminated {
		t.Fatalf("a delta after the end: %v", err)
	}
}

// TestOneSubscriberConnection waits on many turns through one Window: the
// Window holds one Pub/Sub connection, subscribed to every turn's channel,
// and every waiter wakes on its turn's append.
func TestOneSubscriberConnection(t *testing.T) {
	addr := needRedis(t)
	name := "redisstore-test-" + randomKey("").ConversationID
	c := redis.NewClient(&redis.Options{Addr: addr, ClientName: name})
	defer c.Close()
	w, err := NewWindow(c, &WindowOptions{Prefix: testPrefix})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	producer, _ := newTestWindow(t, addr, WindowOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	const turns, perTurn = 20, 5
	keys := make([]replay.Key, turns)
	var wg sync.WaitGroup
	woken := make(chan replay.Bounds, turns*perTurn)
	for i := range keys {
		keys[i] = randomKey("t-" + strconv.Itoa(i))
		for range perTurn {
			wg.Go(func() {
				b, err := w.Wait(ctx, keys[i], 0)
				if err != nil {
					t.Error(err)
				}
				woken <- b
			})
		}
	}
	// Every turn's channel is subscribed on one connection.
	for {
		lines, err := c.ClientList(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		var subs []string
		for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
			if strings.Contains(l, " name="+name+" ") && !strings.Contains(l, " sub=0 ") {
				subs = append(subs, l)
			}
		}
		if len(subs) > 1 {
			t.Fatalf("%d connections subscribed: %v", len(subs), subs)
		}
		if len(subs) == 1 && strings.Contains(subs[0], " sub="+strconv.Itoa(turns)+" ") {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the subscriptions did not reach %d: %v", turns, subs)
		case <-time.After(10 * time.Millisecond):
		}
	}
	for _, k := range keys {
		if _, err := producer.Append(ctx, k, envelope(k, 1, "", false)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(woken)
	for b := range woken {
		if b != (replay.Bounds{Latest: 1}) {
			t.Fatalf("a waiter woke with %v", b)
		}
	}
}

// TestCloseEndsWaits closes a Window while readers wait on it: each Wait
// returns an error at once, and the Window reads no more.
func TestCloseEndsWaits(t *testing.T) {
	addr := needRedis(t)
	c := newClient(addr)
	defer c.Close()
	w, err := NewWindow(c, &WindowOptions{Prefix: testPrefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	key := randomKey("t-close")
	errs := make(chan error, 10)
	for range cap(errs) {
		go func() {
			_, err := w.Wait(ctx, key, 0)
			errs <- err
		}()
	}
	time.Sleep(50 * time.Millisecond) // the Waits are waiting
	w.Close()
	for range cap(errs) {
		select {
		case err := <-errs:
			if err == nil || ctx.Err() != nil {
				t.Fatalf("a Wait returned %v on Close", err)
			}
		case <-ctx.Done():
			t.Fatal("a Wait outlived Close")
		}
	}
	if _, _, err := w.Read(ctx, key, 0, 1); err == nil {
		t.Fatal("a closed Window read")
	}
}

// TestIdleUnsubscribe waits on a turn until the Wait's context ends: the
// Window stays subscribed to the turn's channel for a while, then
// unsubscribes, and a later Wait subscribes again and wakes on an append.
func TestIdleUnsubscribe(t *testing.T) {
	addr := needRedis(t)
	w, c := newTestWindow(t, addr, WindowOptions{IdleUnsubscribe: 50 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	key := randomKey("t-idle")
	channel := keysOf(testPrefix, key).channel
	numsub := func() int64 {
		n, err := c.PubSubNumSub(ctx, channel).Result()
		if err != nil {
			t.Fatal(err)
		}
		return n[channel]
	}
	waitFor := func(want int64) {
		for numsub() != want {
			select {
			case <-ctx.Done():
				t.Fatalf("the channel's subscribers did not reach %d", want)
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
	wctx, wcancel := context.WithTimeout(ctx, 100*time.Millisecond)
	if _, err := w.Wait(wctx, key, 0); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait on an empty turn: %v", err)
	}
	wcancel()
	waitFor(0)
	done := make(chan error, 1)
	go func() {
		_, err := w.Wait(ctx, key, 0)
		done <- err
	}()
	waitFor(1)
	if _, err := w.Append(ctx, key, envelope(key, 1, "", false)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
