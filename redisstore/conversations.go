package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/redis/go-redis/v9"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// DefaultConversationPrefix starts every key a [ConversationStore] uses:
// "chatprotocol:conversation:".
const DefaultConversationPrefix = "chatprotocol:conversation:"

// ConversationOptions configures a [ConversationStore]; nil means all
// defaults.
type ConversationOptions struct {
	// Prefix starts the names of the store's keys; "" means
	// [DefaultConversationPrefix]. Instances that share conversations
	// share a prefix.
	Prefix string
}

// ConversationStore is a [conversation.Store] on Redis that every instance
// of a host shares (docs/contract.md sections 11.9 and 20.1): the running
// turn it records is the one a resume or a stop finds, on any instance.
// Each conversation is a hash <prefix>{<conversation>}:c (owner, tenant,
// turn count, running turn), its turn ids and user texts in start order
// in lists :d and :u, each turn's position in a hash :i, each ended
// turn's reduced state, byte for byte, in a hash :s, and the request keys
// of the starts ([conversation.TurnStart]) in hashes :k (turn → key) and
// :q (key → turn); the id is escaped as the window's, and the braces keep
// the keys in one Cluster slot. Nothing expires.
//
// Create, StartTurn and EndTurn are one Lua script each, atomic: a start
// whose key :q holds gets that turn back, and otherwise records its turn
// only when none runs, so that of concurrent starts on any instances
// exactly one wins, and of those with one key exactly one starts and the
// others get its turn; a resend of the same call (a client's retry)
// succeeds again without a second write. Running, Turn and History
// are one script each, one snapshot. A write never sent or refused by
// Redis is checkpoint-write-failed, one whose answer was lost
// needs-reconciliation, a failed read store-unavailable.
//
// Redis acknowledges before it syncs (section 11.9): a restart or a
// failover may lose acknowledged writes, so the store declares no
// persistedHistory ([ConversationStore.Capabilities]). It is safe for
// concurrent use; the client is the caller's.
type ConversationStore struct {
	client redis.UniversalClient
	prefix string
}

var (
	_ conversation.Store    = (*ConversationStore)(nil)
	_ conversation.Declarer = (*ConversationStore)(nil)
)

// NewConversationStore returns a [ConversationStore] on client's Redis;
// opts may be nil. It fails when client is nil.
func NewConversationStore(client redis.UniversalClient, opts *ConversationOptions) (*ConversationStore, error) {
	if client == nil {
		return nil, errors.New("redisstore: NewConversationStore needs a client")
	}
	s := &ConversationStore{client: client, prefix: DefaultConversationPrefix}
	if opts != nil && opts.Prefix != "" {
		s.prefix = opts.Prefix
	}
	return s, nil
}

// Capabilities returns what a [ConversationStore] lets a host declare
// (docs/contract.md sections 8, 11.9 and 20.5): nothing. Redis keeps the
// conversations across a restart only as far as its append-only file was
// synced, and a failover may lose the newest writes: it is no durable
// history, so persistedHistory stays false; keep the conversations on
// pgstore to declare it.
func (s *ConversationStore) Capabilities() chatprotocol.ChatCapabilities {
	return chatprotocol.ChatCapabilities{}
}

// convKeys are the names of one conversation's keys, in the order the
// scripts take them.
type convKeys struct {
	record, positions, ids, texts, states, keyOf, turnOf string
}

// keysOf returns the keys of conversation id under s's
// prefix: <prefix>{<id>}:c, :i, :d, :u, :s, :k and :q, the id escaped.
func (s *ConversationStore) keysOf(id string) convKeys {
	base := s.prefix + "{" + escaper.Replace(id) + "}:"
	return convKeys{record: base + "c", positions: base + "i", ids: base + "d", texts: base + "u", states: base + "s",
		keyOf: base + "k", turnOf: base + "q"}
}

// write runs a write script and returns its answer, or the store's error:
// checkpoint-write-failed when nothing was sent or Redis refused the
// script, needs-reconciliation when the answer was lost.
func (s *ConversationStore) write(ctx context.Context, what string, script *redis.Script, keys []string, args ...any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, refusal.Wrap(refusal.CodeCheckpointWriteFailed, "", "redisstore: "+what+" not sent: the context ended", err)
	}
	res, err := script.Run(ctx, s.client, keys, args...).Result()
	if err == nil {
		return res, nil
	}
	if notSent(err) {
		return nil, refusal.Wrap(refusal.CodeCheckpointWriteFailed, "", "redisstore: "+what+" not written", err)
	}
	return nil, refusal.Wrap(refusal.CodeNeedsReconciliation, "", "redisstore: "+what+": outcome unknown, the answer was lost", err)
}

// notSent reports whether err tells that a command did nothing: Redis
// answered with an error (the scripts check before they write), the
// connection could not be dialled or taken from the pool, or the client
// is closed.
func notSent(err error) bool {
	var reply redis.Error
	var op *net.OpError
	return (errors.As(err, &reply) && !errors.Is(err, redis.Nil)) || (errors.As(err, &op) && op.Op == "dial") ||
		errors.Is(err, redis.ErrPoolTimeout) || errors.Is(err, redis.ErrClosed)
}

// read runs a read script; a failure is store-unavailable.
func (s *ConversationStore) read(ctx context.Context, script *redis.Script, keys []string, args ...any) ([]any, error) {
	res, err := script.Run(ctx, s.client, keys, args...).Result()
	if err != nil {
		return nil, refusal.Wrap(refusal.CodeStoreUnavailable, "", "redisstore: conversation read failed", err)
	}
	a, ok := res.([]any)
	if !ok {
		return nil, fmt.Errorf("redisstore: a conversation script answered %v", res)
	}
	return a, nil
}

// errNoConversation is the refusal for an unknown conversation.
func errNoConversation() error {
	return refusal.New(refusal.CodeConversationNotFound, "", "redisstore: no such conversation")
}

// Create implements [conversation.Store]: one script, which stores the
// record unless the id is taken.
func (s *ConversationStore) Create(ctx context.Context, id string, owner conversation.Principal) (conversation.Conversation, error) {
	if id == "" {
		id = conversation.NewID()
	}
	if err := conversation.CheckConversation(id); err != nil {
		return conversation.Conversation{}, err
	}
	if err := conversation.CheckOwner(owner); err != nil {
		return conversation.Conversation{}, err
	}
	k := s.keysOf(id)
	res, err := s.write(ctx, "conversation create", createScript, []string{k.record}, owner.ID, owner.Tenant, conversation.NewID())
	if err != nil {
		return conversation.Conversation{}, err
	}
	if n, _ := res.(int64); n != 1 {
		return conversation.Conversation{}, refusal.New(refusal.CodeConversationExists, "", "redisstore: the conversation id is taken")
	}
	return conversation.Conversation{ID: id, Owner: owner}, nil
}

// Get implements [conversation.Store]: one HMGET.
func (s *ConversationStore) Get(ctx context.Context, id string) (conversation.Conversation, error) {
	if err := conversation.CheckConversation(id); err != nil {
		return conversation.Conversation{}, err
	}
	vals, err := s.client.HMGet(ctx, s.keysOf(id).record, "o", "n", "k", "r").Result()
	if err != nil {
		return conversation.Conversation{}, refusal.Wrap(refusal.CodeStoreUnavailable, "", "redisstore: conversation read failed", err)
	}
	return recordOf(id, vals)
}

// StartTurn implements [conversation.Store]: one script, which returns the
// turn of start's key when the conversation has one, and otherwise
// appends the turn and records it as running only when the conversation
// has none.
func (s *ConversationStore) StartTurn(ctx context.Context, id string, start conversation.TurnStart) (conversation.Turn, bool, error) {
	if err := conversation.CheckConversation(id); err != nil {
		return conversation.Turn{}, false, err
	}
	if err := conversation.CheckTurnStart(start); err != nil {
		return conversation.Turn{}, false, err
	}
	t := conversation.Turn{ID: conversation.NewID(), UserText: start.UserText, Key: start.Key}
	k := s.keysOf(id)
	res, err := s.write(ctx, "turn start", startScript, []string{k.record, k.positions, k.ids, k.texts, k.states, k.keyOf, k.turnOf},
		t.ID, start.UserText, start.Key)
	if err != nil {
		return conversation.Turn{}, false, err
	}
	a, _ := res.([]any)
	if len(a) == 4 {
		seen := conversation.Turn{ID: str(a[1]), Position: int(num(a[0])), UserText: str(a[2]), Key: start.Key}
		if a[3] != nil {
			seen.State = []byte(str(a[3]))
		}
		return seen, false, nil
	}
	var n int64
	if len(a) == 1 {
		n = num(a[0])
	}
	switch {
	case n > 0:
		t.Position = int(n)
		return t, true, nil
	case n == -1:
		return conversation.Turn{}, false, errNoConversation()
	case n == -2:
		return conversation.Turn{}, false, refusal.New(refusal.CodeTurnRunning, "", "redisstore: a turn of the conversation is running")
	}
	return conversation.Turn{}, false, fmt.Errorf("redisstore: the start script answered %v", res)
}

// EndTurn implements [conversation.Store]: one script, which stores the
// state of a turn without one and clears the running turn when it is this
// one.
func (s *ConversationStore) EndTurn(ctx context.Context, id, turnID string, state []byte) error {
	if err := conversation.CheckTurn(id, turnID); err != nil {
		return err
	}
	if state == nil {
		return refusal.New(refusal.CodeInvalidInput, "", "redisstore: an ended turn has a state")
	}
	k := s.keysOf(id)
	res, err := s.write(ctx, "turn end", endScript, []string{k.record, k.positions, k.states}, turnID, state)
	if err != nil {
		return err
	}
	switch n, _ := res.(int64); n {
	case 1:
		return nil
	case -1:
		return errNoConversation()
	case 0:
		return refusal.New(refusal.CodeTurnNotRunning, "", "redisstore: the turn is not running")
	}
	return fmt.Errorf("redisstore: the end script answered %v", res)
}

// Running implements [conversation.Store]: one script.
func (s *ConversationStore) Running(ctx context.Context, id string) (conversation.Turn, bool, error) {
	if err := conversation.CheckConversation(id); err != nil {
		return conversation.Turn{}, false, err
	}
	k := s.keysOf(id)
	a, err := s.read(ctx, runningScript, []string{k.record, k.positions, k.texts, k.keyOf})
	if err != nil {
		return conversation.Turn{}, false, err
	}
	if len(a) == 0 {
		return conversation.Turn{}, false, errNoConversation()
	}
	if len(a) != 4 || a[0] == nil {
		return conversation.Turn{}, false, nil
	}
	t := conversation.Turn{ID: str(a[0]), Position: int(num(a[1])), UserText: str(a[2]), Key: str(a[3])}
	return t, true, nil
}

// Turn implements [conversation.Store]: one script, the record and the
// turn from one snapshot.
func (s *ConversationStore) Turn(ctx context.Context, id, turnID string) (conversation.Conversation, conversation.Turn, error) {
	if err := conversation.CheckTurn(id, turnID); err != nil {
		return conversation.Conversation{}, conversation.Turn{}, err
	}
	k := s.keysOf(id)
	a, err := s.read(ctx, turnScript, []string{k.record, k.positions, k.texts, k.states, k.keyOf}, turnID)
	if err != nil {
		return conversation.Conversation{}, conversation.Turn{}, err
	}
	if len(a) != 8 {
		return conversation.Conversation{}, conversation.Turn{}, errNoConversation()
	}
	c, err := recordOf(id, a[:4])
	if err != nil {
		return conversation.Conversation{}, conversation.Turn{}, err
	}
	if a[4] == nil {
		return c, conversation.Turn{}, refusal.New(refusal.CodeTurnNotFound, "", "redisstore: no such turn")
	}
	t := conversation.Turn{ID: turnID, Position: int(num(a[4])), UserText: str(a[5]), Key: str(a[7])}
	if a[6] != nil {
		t.State = []byte(str(a[6]))
	}
	return c, t, nil
}

// History implements [conversation.Store]: one script, one snapshot and
// one round trip.
func (s *ConversationStore) History(ctx context.Context, id string) (conversation.History, error) {
	if err := conversation.CheckConversation(id); err != nil {
		return conversation.History{}, err
	}
	k := s.keysOf(id)
	a, err := s.read(ctx, historyScript, []string{k.record, k.ids, k.texts, k.states, k.keyOf})
	if err != nil {
		return conversation.History{}, err
	}
	if len(a) != 8 {
		return conversation.History{}, errNoConversation()
	}
	c, err := recordOf(id, a[:4])
	if err != nil {
		return conversation.History{}, err
	}
	ids, _ := a[4].([]any)
	texts, _ := a[5].([]any)
	flat, _ := a[6].([]any)
	if len(texts) != len(ids) {
		return conversation.History{}, fmt.Errorf("redisstore: conversation %q holds %d turn ids and %d texts", id, len(ids), len(texts))
	}
	states, keys := pairs(flat), pairs(a[7])
	h := conversation.History{Conversation: c, Turns: make([]conversation.Turn, len(ids))}
	for i := range ids {
		t := conversation.Turn{ID: str(ids[i]), Position: i + 1, UserText: str(texts[i]), Key: keys[str(ids[i])]}
		if st, ok := states[t.ID]; ok {
			t.State = []byte(st)
		}
		h.Turns[i] = t
	}
	return h, nil
}

// recordOf reads the record's fields o, n, k, r (owner, tenant, turns,
// running turn) as HMGET or a script returns them; a record without an
// owner is an unknown conversation.
func recordOf(id string, f []any) (conversation.Conversation, error) {
	if len(f) != 4 || f[0] == nil {
		return conversation.Conversation{}, errNoConversation()
	}
	c := conversation.Conversation{ID: id, Owner: conversation.Principal{ID: str(f[0]), Tenant: str(f[1])}, Running: str(f[3])}
	c.Turns = int(num(f[2]))
	return c, nil
}

// pairs reads HGETALL's flat field, value pairs as a map.
func pairs(v any) map[string]string {
	flat, _ := v.([]any)
	m := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		m[str(flat[i])] = str(flat[i+1])
	}
	return m
}

// str is a reply's string, "" for nil.
func str(v any) string {
	s, _ := v.(string)
	return s
}

// num is a reply's integer, from a number or a string of digits; 0
// otherwise.
func num(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case string:
		var x int64
		_, _ = fmt.Sscan(n, &x)
		return x
	}
	return 0
}
