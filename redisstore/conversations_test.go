package redisstore

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/conversation/conversationtest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// TestConversationStoreKit runs the conformance kit of conversation
// stores, each check's store on a client of its own, as an instance holds
// it; the concurrent starts race on 32 goroutines.
func TestConversationStoreKit(t *testing.T) {
	addr := needRedis(t)
	conversationtest.TestStore(t, conversationtest.Config{Starts: 32, NewSubject: func(context.Context) (conversationtest.Subject, error) {
		c := newClient(addr)
		s, err := NewConversationStore(c, &ConversationOptions{Prefix: testPrefix + "conv:"})
		if err != nil {
			_ = c.Close()
			return conversationtest.Subject{}, err
		}
		return conversationtest.Subject{Store: s, Close: func() { _ = c.Close() }}, nil
	}})
}

// TestConversationStoreAcrossInstances: a turn started through one
// instance's store is the running turn another instance's store finds,
// and the second's start is refused turn-running until the first ends it.
func TestConversationStoreAcrossInstances(t *testing.T) {
	addr := needRedis(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var stores [2]*ConversationStore
	for i := range stores {
		c := newClient(addr)
		t.Cleanup(func() { _ = c.Close() })
		s, err := NewConversationStore(c, &ConversationOptions{Prefix: testPrefix + "conv:"})
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	owner := conversation.Principal{ID: "u", Tenant: "t:{x}"}
	c, err := stores[0].Create(ctx, "", owner)
	if err != nil {
		t.Fatal(err)
	}
	t1, _, err := stores[0].StartTurn(ctx, c.ID, conversation.TurnStart{UserText: "hello", Key: "run-{1}"})
	if err != nil {
		t.Fatal(err)
	}
	run, ok, err := stores[1].Running(ctx, c.ID)
	if err != nil || !ok || run.ID != t1.ID || run.Position != 1 || run.UserText != "hello" || run.Key != "run-{1}" {
		t.Fatalf("running through the other instance: %+v %v %v, want %+v", run, ok, err, t1)
	}
	if seen, started, err := stores[1].StartTurn(ctx, c.ID, conversation.TurnStart{UserText: "hello", Key: "run-{1}"}); err != nil || started || seen.ID != t1.ID || seen.Position != 1 || seen.Key != t1.Key || seen.UserText != "hello" {
		t.Fatalf("the same key through the other instance: %+v, started %v, %v; want %+v", seen, started, err, t1)
	}
	if _, _, err := stores[1].StartTurn(ctx, c.ID, conversation.TurnStart{UserText: "again", Key: "run-2"}); refusal.CodeOf(err) != refusal.CodeTurnRunning {
		t.Fatalf("a second start through the other instance: %v", err)
	}
	if err := stores[1].EndTurn(ctx, c.ID, t1.ID, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	got, err := stores[0].Get(ctx, c.ID)
	if err != nil || got != (conversation.Conversation{ID: c.ID, Owner: owner, Turns: 1}) {
		t.Fatalf("get through the first instance: %+v %v", got, err)
	}
	// An empty state is a state: stored and read back as ended.
	t2, _, err := stores[0].StartTurn(ctx, c.ID, conversation.TurnStart{})
	if err != nil {
		t.Fatal(err)
	}
	if err := stores[0].EndTurn(ctx, c.ID, t2.ID, []byte{}); err != nil {
		t.Fatal(err)
	}
	h, err := stores[1].History(ctx, c.ID)
	if err != nil || len(h.Turns) != 2 || string(h.Turns[0].State) != `{}` || !h.Turns[1].Ended() || len(h.Turns[1].State) != 0 {
		t.Fatalf("history: %+v %v", h, err)
	}
}

// TestConversationStoreResend: a write resent with the same arguments, as
// a client retries after a lost connection, succeeds again and changes
// nothing.
func TestConversationStoreResend(t *testing.T) {
	addr := needRedis(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	client := newClient(addr)
	t.Cleanup(func() { _ = client.Close() })
	s, err := NewConversationStore(client, &ConversationOptions{Prefix: testPrefix + "conv:"})
	if err != nil {
		t.Fatal(err)
	}
	k := s.keysOf("c-resend-" + conversation.NewID())
	for range 2 {
		if n, err := createScript.Run(ctx, client, []string{k.record}, "u", "", "create-1").Int(); err != nil || n != 1 {
			t.Fatalf("create: %d %v", n, err)
		}
	}
	if n, err := createScript.Run(ctx, client, []string{k.record}, "u", "", "create-2").Int(); err != nil || n != 0 {
		t.Fatalf("another create of the id: %d %v", n, err)
	}
	keys := []string{k.record, k.positions, k.ids, k.texts, k.states, k.keyOf, k.turnOf}
	for _, key := range []string{"run-1", "run-1", ""} { // a resend, keyed or not, is the same start
		if a, err := startScript.Run(ctx, client, keys, "turn-1", "q", key).Int64Slice(); err != nil || len(a) != 1 || a[0] != 1 {
			t.Fatalf("start: %v %v", a, err)
		}
	}
	if a, err := startScript.Run(ctx, client, keys, "turn-2", "q", "run-2").Int64Slice(); err != nil || len(a) != 1 || a[0] != -2 {
		t.Fatalf("another start: %v %v", a, err)
	}
	if a, err := startScript.Run(ctx, client, keys, "turn-3", "q", "run-1").Slice(); err != nil || len(a) != 4 || a[1] != "turn-1" {
		t.Fatalf("another start with the first one's key: %v %v", a, err)
	}
	if n, err := client.LLen(ctx, k.ids).Result(); err != nil || n != 1 {
		t.Fatalf("%d turns stored (%v), want 1", n, err)
	}
}

// TestConversationStoreUnreachable: with Redis out of reach a write is
// checkpoint-write-failed (nothing was sent) and a read store-unavailable;
// ids are refused invalid-input before any I/O.
func TestConversationStoreUnreachable(t *testing.T) {
	ln := listenClosed(t)
	client := redis.NewClient(&redis.Options{Addr: ln, MaxRetries: -1, DialTimeout: time.Second})
	t.Cleanup(func() { _ = client.Close() })
	s, err := NewConversationStore(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	owner := conversation.Principal{ID: "u"}
	if _, err := s.Create(ctx, "c-1", owner); refusal.CodeOf(err) != refusal.CodeCheckpointWriteFailed {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := s.StartTurn(ctx, "c-1", conversation.TurnStart{UserText: "q"}); refusal.CodeOf(err) != refusal.CodeCheckpointWriteFailed {
		t.Fatalf("start: %v", err)
	}
	if err := s.EndTurn(ctx, "c-1", "t-1", []byte(`{}`)); refusal.CodeOf(err) != refusal.CodeCheckpointWriteFailed {
		t.Fatalf("end: %v", err)
	}
	if _, err := s.Get(ctx, "c-1"); refusal.CodeOf(err) != refusal.CodeStoreUnavailable {
		t.Fatalf("get: %v", err)
	}
	if _, err := s.History(ctx, "c-1"); refusal.CodeOf(err) != refusal.CodeStoreUnavailable {
		t.Fatalf("history: %v", err)
	}
	if _, err := s.Get(ctx, "a\x00b"); refusal.CodeOf(err) != refusal.CodeInvalidInput {
		t.Fatalf("get of a NUL id: %v", err)
	}
	done, stop := context.WithCancel(ctx)
	stop()
	if _, err := s.Create(done, "c-1", owner); refusal.CodeOf(err) != refusal.CodeCheckpointWriteFailed {
		t.Fatalf("create with an ended context: %v", err)
	}
}

func TestConversationStoreCapabilities(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer client.Close()
	s, err := NewConversationStore(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := conversation.Capabilities(conversation.Stores{Conversations: s}); got.PersistedHistory {
		t.Fatalf("a Redis conversation store declares %+v", got)
	}
	if _, err := NewConversationStore(nil, nil); err == nil {
		t.Fatal("a nil client was accepted")
	}
}

// listenClosed returns an address on which nothing listens: a port just
// closed.
func listenClosed(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestConversationStoreAnswerLost: a server that reads the write's script
// and closes the connection without an answer leaves the outcome unknown:
// needs-reconciliation, never success or checkpoint-write-failed.
func TestConversationStoreAnswerLost(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				buf := make([]byte, 4096)
				for {
					n, err := conn.Read(buf)
					if err != nil {
						return
					}
					if strings.Contains(strings.ToUpper(string(buf[:n])), "EVAL") {
						return // read, never answered
					}
					// One error per command read: each starts a line with '*'.
					cmds := strings.Count("\r\n"+string(buf[:n]), "\r\n*")
					if _, err := conn.Write([]byte(strings.Repeat("-ERR unknown command\r\n", cmds))); err != nil {
						return
					}
				}
			}()
		}
	}()
	client := redis.NewClient(&redis.Options{Addr: l.Addr().String(), MaxRetries: -1})
	t.Cleanup(func() { _ = client.Close() })
	s, err := NewConversationStore(client, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := s.Create(ctx, "c-1", conversation.Principal{ID: "u"}); refusal.CodeOf(err) != refusal.CodeNeedsReconciliation {
		t.Fatalf("create: %v", err)
	}
	if _, _, err := s.StartTurn(ctx, "c-1", conversation.TurnStart{UserText: "q"}); refusal.CodeOf(err) != refusal.CodeNeedsReconciliation {
		t.Fatalf("start: %v", err)
	}
	if _, err := s.Get(ctx, "c-1"); refusal.CodeOf(err) != refusal.CodeStoreUnavailable {
		t.Fatalf("get: %v", err)
	}
}
