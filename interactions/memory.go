package interactions

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// DefaultMaxClosedCards is the number of closed cards a [MemoryStore] keeps
// by default: 10,000.
const DefaultMaxClosedCards = 10_000

// AuthorityFunc reads a caller's current authority in a conversation from
// the host's own sessions (docs/contract.md section 13.2). A [MemoryStore]
// calls it inside its fence, so it must not block for long nor call the
// store; a revocation that must not race an answer runs in
// [MemoryStore.Fence].
type AuthorityFunc func(caller Caller, conversation string) Authority

// MemoryStoreOptions configures a [MemoryStore]; nil means the defaults.
type MemoryStoreOptions struct {
	// MaxClosedCards bounds the closed cards kept: beyond it the card that
	// closed first is forgotten, and an answer to it is then refused as
	// card-not-found rather than by its late refusal. 0 means
	// [DefaultMaxClosedCards], a negative value no bound. Pending cards are
	// never forgotten.
	MaxClosedCards int
}

// MemoryStore is a Store for one process: the card store of the
// lightweight profile (docs/contract.md sections 11.7 and 13.2), which
// imports no test package. One lock is its fence: a Transact holds it from
// reading the card and the caller's authority ([AuthorityFunc]) to its
// commit, and Fence holds it for the host's revocations.
//
// What it does not promise: nothing survives the process; after a restart
// every card reads as missing. Commits never lose an acknowledgement.
// Transitions are kept with their cards (Transitions), for hosts that read
// an outbox; a host in one process is woken by [Resolver.Wait] instead.
// Safe for concurrent use.
type MemoryStore struct {
	authority AuthorityFunc
	maxClosed int

	mu     sync.Mutex
	cards  map[Key]*memoryCard
	closed []Key // in the order they closed, for MaxClosedCards, from head
	head   int
}

// memoryCard is one stored card and the transitions stored with it.
type memoryCard struct {
	rec         *Record
	transitions []Transition
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty [MemoryStore] that reads authority with
// authority; a nil authority authorizes nobody (only the backend
// operations, which take no caller, then succeed). opts may be nil.
func NewMemoryStore(authority AuthorityFunc, opts *MemoryStoreOptions) *MemoryStore {
	s := &MemoryStore{authority: authority, maxClosed: DefaultMaxClosedCards, cards: map[Key]*memoryCard{}}
	if opts != nil && opts.MaxClosedCards != 0 {
		s.maxClosed = opts.MaxClosedCards
	}
	return s
}

// Fence runs fn holding the store's fence, so that no Transact decides
// meanwhile: a host revokes or changes a caller's authority in it, and an
// answer relying on the old authority either commits before or is decided
// after (docs/contract.md section 13.2, item 2). fn must not call the store.
func (s *MemoryStore) Fence(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn()
}

// current is what the fence reads: the card and the caller's authority.
// s.mu is held.
func (s *MemoryStore) current(key Key, caller *Caller) Current {
	var cur Current
	if c := s.cards[key]; c != nil {
		cur.Record = cloneRecord(c.rec)
	}
	if caller != nil && s.authority != nil {
		cur.Authority = s.authority(*caller, key.Conversation)
	}
	return cur
}

// Transact implements Store: fn runs once under the fence, and its change
// is checked ([Change.Check]) and written before the fence is released.
func (s *MemoryStore) Transact(ctx context.Context, key Key, caller *Caller, fn TxFunc) error {
	if err := ctx.Err(); err != nil {
		return refusal.Wrap(refusal.CodeCheckpointWriteFailed, "", "context ended before the transaction", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.current(key, caller)
	change, err := fn(cur)
	if err != nil {
		return err
	}
	if err := change.Check(key, cur.Record); err != nil || change.Next == nil {
		return err
	}
	c := s.cards[key]
	if c == nil {
		c = &memoryCard{}
		s.cards[key] = c
	}
	c.rec = cloneRecord(change.Next)
	if tr := change.Transition; tr != nil {
		t := *tr
		if tr.Response != nil {
			resp := *tr.Response
			resp.Value = append(json.RawMessage(nil), resp.Value...)
			t.Response = &resp
		}
		c.transitions = append(c.transitions, t)
	}
	if change.Next.Status.Terminal() {
		s.forgetBeyond(key)
	}
	return nil
}

// forgetBeyond records that key closed and forgets the card that closed
// first once more than maxClosed are kept. s.mu is held.
func (s *MemoryStore) forgetBeyond(key Key) {
	s.closed = append(s.closed, key)
	if s.maxClosed < 0 || len(s.closed)-s.head <= s.maxClosed {
		return
	}
	if c := s.cards[s.closed[s.head]]; c != nil && c.rec.Status.Terminal() {
		delete(s.cards, s.closed[s.head])
	}
	s.head++
	if s.head > len(s.closed)/2 { // drop the forgotten half, amortised O(1)
		s.closed, s.head = append([]Key(nil), s.closed[s.head:]...), 0
	}
}

// Read implements Store.
func (s *MemoryStore) Read(ctx context.Context, key Key, caller *Caller) (Current, error) {
	if err := ctx.Err(); err != nil {
		return Current{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current(key, caller), nil
}

// Transitions returns the workflow transitions stored with the card under
// key, oldest first (at most one: a card closes once); nil for none.
func (s *MemoryStore) Transitions(key Key) []Transition {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.cards[key]
	if c == nil || len(c.transitions) == 0 {
		return nil
	}
	return append([]Transition(nil), c.transitions...)
}
