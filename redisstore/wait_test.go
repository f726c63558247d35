package redisstore

import (
	"context"
	"strconv"
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
