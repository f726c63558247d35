package redisstore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// TestKeyAfterTheTombstoneExpired: a start on Redis whose request key
// names an ended turn is that turn again while the window holds it or
// its tombstone, and stale-cursor through conversation.Settling once its
// bounds expired (TombstoneTTL), on another instance too: a client
// re-posting the run is refused rather than left waiting for frames.
func TestKeyAfterTheTombstoneExpired(t *testing.T) {
	addr := needRedis(t)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	opts := WindowOptions{MaxAge: 100 * time.Millisecond, EndedTTL: 100 * time.Millisecond, TombstoneTTL: 300 * time.Millisecond}
	var stores [2]conversation.Settling
	for i := range stores {
		w, c := newTestWindow(t, addr, opts)
		cs, err := NewConversationStore(c, &ConversationOptions{Prefix: testPrefix + "conv:"})
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = conversation.Settling{Store: cs, Window: w}
	}
	conv, err := stores[0].Create(ctx, "", conversation.Principal{ID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	start := conversation.TurnStart{UserText: "hi", Key: "run-1"}
	tu, started, err := stores[0].StartTurn(ctx, conv.ID, start)
	if err != nil || !started {
		t.Fatalf("start: %v %v", started, err)
	}
	key := replay.Key{ConversationID: conv.ID, TurnID: tu.ID}
	p, err := turn.Start(ctx, stores[0].Window, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(p.Delta(ctx, "hello"), p.Complete(ctx)); err != nil {
		t.Fatal(err)
	}
	if err := conversation.EndFromWindow(ctx, stores[0], stores[0].Window, key); err != nil {
		t.Fatal(err)
	}
	if seen, started, err := stores[1].StartTurn(ctx, conv.ID, start); err != nil || started || seen.ID != tu.ID {
		t.Fatalf("the key while the window holds its turn: %+v %v %v", seen, started, err)
	}
	for {
		b, err := stores[1].Window.Bounds(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if b.Latest == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the bounds never expired: %v", b)
		case <-time.After(50 * time.Millisecond):
		}
	}
	seen, started, err := stores[1].StartTurn(ctx, conv.ID, start)
	if !errors.Is(err, refusal.ErrStaleCursor) || started || seen.ID != tu.ID {
		t.Fatalf("the key once its tombstone expired: %+v %v %v", seen, started, err)
	}
	if ce, ok := errors.AsType[*replay.CursorError](err); !ok || ce.Bounds != (replay.Bounds{}) {
		t.Fatalf("the refusal's bounds: %v", err)
	}
}
