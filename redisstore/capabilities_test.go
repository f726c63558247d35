package redisstore

import (
	"context"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// durable declares what pgstore's stores declare, for the combination of
// a Redis window with PostgreSQL's stores (this module links no pgstore).
type durable struct{ c chatprotocol.ChatCapabilities }

func (d durable) Capabilities() chatprotocol.ChatCapabilities { return d.c }

// TestCapabilitiesWithARedisWindow: a Redis window with the memory stores
// declares connectionReplay alone, and a host restarted on it (a new
// client, new memory stores) replays the earlier turn's frames to a
// reconnecting client while its conversation is gone; with PostgreSQL's
// stores it adds what each keeps, never interruptedTurnRecovery, whatever
// the host resumes (the window's frames are not durable).
func TestCapabilitiesWithARedisWindow(t *testing.T) {
	addr := needRedis(t)
	ctx := t.Context()
	w1, _ := newTestWindow(t, addr, WindowOptions{})
	convs := conversation.NewMemoryStore()
	memory := conversation.Stores{Window: w1, Conversations: convs, Recovery: recovery.NewMemoryStore(nil),
		Cards: interactions.NewMemoryStore(nil, nil), ResumesInterrupted: true}
	if got := conversation.Capabilities(memory); got.Has(chatprotocol.CapabilityPersistedHistory) || got.Has(chatprotocol.CapabilityPersistedDecisions) ||
		got.Has(chatprotocol.CapabilityCompletedToolCheckpoints) || got.Has(chatprotocol.CapabilityInterruptedTurnRecovery) || !got.ConnectionReplay {
		t.Fatalf("a Redis window on the memory stores declares %+v, want connectionReplay alone", got)
	}

	pg := memory
	pg.Conversations = struct {
		conversation.Store
		durable
	}{convs, durable{chatprotocol.ChatCapabilities{PersistedHistory: true}}}
	pg.Recovery = struct {
		recovery.Store
		durable
	}{recovery.NewMemoryStore(nil), durable{chatprotocol.ChatCapabilities{CompletedToolCheckpoints: true, InterruptedTurnRecovery: true}}}
	pg.Cards = struct {
		interactions.Store
		durable
	}{interactions.NewMemoryStore(nil, nil), durable{chatprotocol.ChatCapabilities{PersistedDecisions: true}}}
	if got := conversation.Capabilities(pg); !got.ConnectionReplay || !got.PersistedHistory || !got.PersistedDecisions || !got.CompletedToolCheckpoints || got.InterruptedTurnRecovery {
		t.Fatalf("a Redis window on PostgreSQL's stores declares %+v, want all but interruptedTurnRecovery", got)
	}

	// The first process: a conversation and its turn.
	c, err := convs.Create(ctx, "", conversation.Principal{ID: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	tu, _, err := convs.StartTurn(ctx, c.ID, conversation.TurnStart{UserText: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	key := randomKey(tu.ID)
	p, err := turn.Start(ctx, w1, key, nil)
	if err == nil {
		err = p.Delta(ctx, "Hi.")
	}
	if err == nil {
		err = p.Complete(ctx)
	}
	if err != nil {
		t.Fatal(err)
	}

	// The restarted process: a new client and window, new memory stores.
	w2, _ := newTestWindow(t, addr, WindowOptions{})
	b, frames, err := w2.Read(context.Background(), key, 0, 1<<20)
	if err != nil || !b.Ended || len(frames) != 3 {
		t.Fatalf("connectionReplay: the restarted host reads %d frames (ended %v, err %v), want started, the delta, completed", len(frames), b.Ended, err)
	}
	if _, err := conversation.NewMemoryStore().History(ctx, c.ID); err == nil {
		t.Fatal("persistedHistory false: the restarted memory conversation store holds the conversation")
	}
}
