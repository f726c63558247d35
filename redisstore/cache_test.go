package redisstore

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// TestLostFramesReadAgain has a Window keep a turn's newest frames, then
// takes frames 4 and 5 from Redis as a restart or a failover to a replica
// that lacked them would, and has a producer append another frame 4: once
// the Window hears the turn's bounds go back (a message), or loses its
// subscriber's connection (as in a restart), its reads return the new
// frames, never the ones it kept.
func TestLostFramesReadAgain(t *testing.T) {
	addr := needRedis(t)
	for _, how := range []string{"message", "connection"} {
		t.Run(how, func(t *testing.T) { lostFrames(t, addr, how == "connection") })
	}
}

// lostFrames is TestLostFramesReadAgain, with the Window's connections
// killed when kill is set.
func lostFrames(t *testing.T, addr string, kill bool) {
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
	key := randomKey("t-lost")
	appendText := func(seq int64, text string) replay.Frame {
		t.Helper()
		f, err := producer.Append(ctx, key, envelope(key, seq, text, false))
		if err != nil {
			t.Fatalf("append %d: %v", seq, err)
		}
		return f
	}
	until := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			select {
			case <-ctx.Done():
				t.Fatalf("%s: the Window heard %d", what, heardOf(w, key))
			case <-time.After(2 * time.Millisecond):
			}
		}
	}
	// The Window waits on the turn before its first frame, so that it
	// hears every message and keeps what it reads.
	waited := make(chan error, 1)
	go func() {
		_, err := w.Wait(ctx, key, 0)
		waited <- err
	}()
	k := keysOf(testPrefix, key)
	until("subscribed", func() bool {
		n, err := c.PubSubNumSub(ctx, k.channel).Result()
		return err == nil && n[k.channel] == 1
	})
	for seq := int64(1); seq <= 5; seq++ {
		appendText(seq, word(seq))
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	until("the message of frame 5", func() bool { return heardOf(w, key) == 5 })
	for after := int64(3); after >= 0; after-- {
		b, frames, err := w.Read(ctx, key, after, 1<<20)
		if err != nil || b.Latest != 5 || len(frames) != int(5-after) {
			t.Fatalf("Read after %d: %v, %d frames, %v", after, b, len(frames), err)
		}
	}
	// Frames 4 and 5 are lost, with the stream's last id.
	kept, err := c.XRangeN(ctx, k.frames, "-", "+", 3).Result()
	if err != nil || len(kept) != 3 {
		t.Fatalf("XRANGE: %v, %v", kept, err)
	}
	if err := c.Del(ctx, k.frames).Err(); err != nil {
		t.Fatal(err)
	}
	for _, e := range kept {
		if err := c.XAdd(ctx, &redis.XAddArgs{Stream: k.frames, ID: e.ID, Values: []any{"t", e.Values["t"], "d", e.Values["d"]}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Set(ctx, k.meta, "3 0 0 0", redis.KeepTTL).Err(); err != nil {
		t.Fatal(err)
	}
	if kill {
		killClients(t, ctx, c, name)
		// The subscriber's connection fails: the Window forgets what it
		// heard, and what it kept.
		until("the failed connection", func() bool { return heardOf(w, key) == 0 })
	}
	if b, err := producer.Bounds(ctx, key); err != nil || b.Latest != 3 {
		t.Fatalf("Bounds after the loss: %v, %v", b, err)
	}
	four := appendText(4, "another four ")
	until("the message of the new frame 4", func() bool { return heardOf(w, key) == 4 })
	b, frames, err := w.Read(ctx, key, 3, 1<<20)
	if err != nil || b.Latest != 4 || len(frames) != 1 || frames[0].Seq != 4 || string(frames[0].Data) != string(four.Data) {
		t.Fatalf("Read after 3: %v, %d frames, %v; want only the new frame 4, %s", b, len(frames), err, four.Data)
	}
	five := appendText(5, "another five ")
	if b, err := w.Wait(ctx, key, 4); err != nil || b.Latest != 5 {
		t.Fatalf("Wait after 4: %v, %v", b, err)
	}
	_, frames, err = w.Read(ctx, key, 3, 1<<20)
	if err != nil || len(frames) != 2 || string(frames[0].Data) != string(four.Data) || string(frames[1].Data) != string(five.Data) {
		t.Fatalf("Read after 3: %d frames, %v; want the new frames 4 and 5", len(frames), err)
	}
}

// killClients kills the connections of the clients named name, the
// subscriber's among them.
func killClients(t *testing.T, ctx context.Context, c *redis.Client, name string) {
	t.Helper()
	lines, err := c.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		if !strings.Contains(l, " name="+name+" ") {
			continue
		}
		id, _, _ := strings.Cut(strings.TrimPrefix(l, "id="), " ")
		if _, err := strconv.ParseInt(id, 10, 64); err != nil {
			t.Fatalf("CLIENT LIST line %q", l)
		}
		if err := c.Do(ctx, "CLIENT", "KILL", "ID", id).Err(); err != nil && !strings.Contains(err.Error(), "No such client") {
			t.Fatal(err)
		}
		killed++
	}
	if killed < 2 {
		t.Fatalf("%d connections named %s, want the subscriber's and another", killed, name)
	}
}

// heardOf returns the newest seq of key's messages that w heard since it
// last forgot them, -1 when w holds nothing of key.
func heardOf(w *Window, key replay.Key) int64 {
	w.fetches.mu.Lock()
	defer w.fetches.mu.Unlock()
	if tr := w.fetches.turns[key]; tr != nil {
		return tr.heard
	}
	return -1
}
