package redisstore

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// TestBatchedAppends appends from 16 producers at once through one
// Window, a turn each, so that appends share pipelines: every turn holds
// its frames in order, without a gap.
func TestBatchedAppends(t *testing.T) {
	addr := needRedis(t)
	w, _ := newTestWindow(t, addr, WindowOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	const producers, frames = 16, 100
	keys := benchKeysT(producers)
	var wg sync.WaitGroup
	for _, key := range keys {
		wg.Go(func() {
			for seq := int64(1); seq <= frames; seq++ {
				if _, err := w.Append(ctx, key, envelope(key, seq, word(seq), seq == frames)); err != nil {
					t.Errorf("%v seq %d: %v", key, seq, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, key := range keys {
		b, got, err := w.Read(ctx, key, 0, 1<<30)
		if err != nil || b != (replay.Bounds{Latest: frames, Ended: true}) || len(got) != frames {
			t.Fatalf("%v: %v, %d frames, %v", key, b, len(got), err)
		}
		for i, f := range got {
			if want := envelope(key, int64(i+1), word(int64(i+1)), i+1 == frames); f.Seq != want.Seq || f.Type != want.Event.EventType() {
				t.Fatalf("%v: frame %d is seq %d %s", key, i, f.Seq, f.Type)
			}
		}
	}
}

// TestAppendContextEnds appends with contexts that end at once or soon,
// many at a time: each Append returns nil or its context's error, none
// hangs, and a turn whose append returned nil holds the frame.
func TestAppendContextEnds(t *testing.T) {
	addr := needRedis(t)
	w, _ := newTestWindow(t, addr, WindowOptions{})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	keys := benchKeysT(200)
	stored := make([]bool, len(keys))
	var wg sync.WaitGroup
	for i, key := range keys {
		wg.Go(func() {
			actx, acancel := context.WithTimeout(ctx, time.Duration(i%20)*50*time.Microsecond)
			defer acancel()
			_, err := w.Append(actx, key, envelope(key, 1, "", false))
			switch {
			case err == nil:
				stored[i] = true
			case !errors.Is(err, context.DeadlineExceeded):
				t.Errorf("append %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	for i, key := range keys {
		b, err := w.Bounds(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if b.Latest > 1 || stored[i] && b.Latest != 1 {
			t.Fatalf("turn %d: bounds %v, append returned nil: %v", i, b, stored[i])
		}
	}
	// The window still appends.
	key := randomKey("t-after")
	if _, err := w.Append(ctx, key, envelope(key, 1, "", false)); err != nil {
		t.Fatal(err)
	}
}

// benchKeysT returns n fresh turns.
func benchKeysT(n int) []replay.Key {
	keys := make([]replay.Key, n)
	for i := range keys {
		keys[i] = randomKey("t-batch")
	}
	return keys
}
