package interactionstest

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/Papercusp/chat-protocol-go/interactions"
)

// DB is a fake database shared by any number of workers: each Open returns
// a fresh worker's Store over the same data, as a new process with its own
// connection pool would get. Records and transitions are stored as JSON, so
// that nothing a worker holds aliases what is stored.
//
// Its one mutex stands for the database's locks: a Store's Transact holds it
// from reading the card row and the caller's authority until commit, which
// is what SELECT ... FOR UPDATE on the card row and a share lock on the
// authorization rows give a PostgreSQL store. Grant, Revoke and Suspend take
// it too, so a revocation waits for a transaction in progress.
//
// DB also keeps what a real database would not: every committed version of
// every card and every commit with the authority it was decided under, for
// tests to check invariants. All methods are safe for concurrent use.
type DB struct {
	mu          sync.Mutex
	cards       map[interactions.Key][]byte
	history     map[interactions.Key][][]byte
	transitions map[interactions.Key][][]byte
	parties     map[identity]*party
	commits     []Commit
	rows        map[interactions.Key]*sync.Mutex // row locks of BrokenUnfencedAuthority
}

// identity is how the fake database knows a caller: by principal and public
// owner; tenant and customer are what it currently says about them.
type identity struct{ principal, publicOwner string }

// party is the fake authorization table's row for one identity.
type party struct {
	caller        interactions.Caller
	active        bool
	conversations map[string]bool
}

// Commit is one committed change, as [DB.Commits] reports it: the key, the
// caller of the Transact (nil for a backend operation), the authority the
// callback was given, the record written and the transition stored with it.
type Commit struct {
	Key        interactions.Key
	Caller     *interactions.Caller
	Authority  interactions.Authority
	Next       interactions.Record
	Transition *interactions.Transition
}

// NewDB returns an empty database.
func NewDB() *DB {
	return &DB{
		cards:       map[interactions.Key][]byte{},
		history:     map[interactions.Key][][]byte{},
		transitions: map[interactions.Key][][]byte{},
		parties:     map[identity]*party{},
		rows:        map[interactions.Key]*sync.Mutex{},
	}
}

// rowLock returns the row lock of the card under key, held across
// statements by BrokenUnfencedAuthority.
func (db *DB) rowLock(key interactions.Key) *sync.Mutex {
	db.mu.Lock()
	defer db.mu.Unlock()
	m := db.rows[key]
	if m == nil {
		m = &sync.Mutex{}
		db.rows[key] = m
	}
	return m
}

// Grant makes c currently authorized: active, with c's tenant and customer,
// and a participant of conversation. Granting an identity again with another
// tenant or customer moves it, so that a session still claiming the old ones
// is refused.
func (db *DB) Grant(c interactions.Caller, conversation string) {
	db.mu.Lock()
	defer db.mu.Unlock()
	id := identity{c.Principal, c.PublicOwner}
	p := db.parties[id]
	if p == nil {
		p = &party{conversations: map[string]bool{}}
		db.parties[id] = p
	}
	p.caller, p.active = c, true
	p.conversations[conversation] = true
}

// Revoke removes c from conversation; c stays active elsewhere.
func (db *DB) Revoke(c interactions.Caller, conversation string) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if p := db.parties[identity{c.Principal, c.PublicOwner}]; p != nil {
		delete(p.conversations, conversation)
	}
}

// Suspend makes c's identity inactive everywhere.
func (db *DB) Suspend(c interactions.Caller) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if p := db.parties[identity{c.Principal, c.PublicOwner}]; p != nil {
		p.active = false
	}
}

// authority computes the current authority of caller in conversation.
// Callers hold db.mu.
func (db *DB) authority(caller *interactions.Caller, conversation string) interactions.Authority {
	if caller == nil {
		return interactions.Authority{}
	}
	p := db.parties[identity{caller.Principal, caller.PublicOwner}]
	if p == nil {
		return interactions.Authority{}
	}
	a := interactions.Authority{Active: p.active, Scope: interactions.Scope{Caller: p.caller}}
	if p.conversations[conversation] {
		a.Scope.Conversation = conversation
	}
	return a
}

// current reads the committed record under key and caller's authority.
// Callers hold db.mu.
func (db *DB) current(key interactions.Key, caller *interactions.Caller) interactions.Current {
	cur := interactions.Current{Authority: db.authority(caller, key.Conversation)}
	if b, ok := db.cards[key]; ok {
		cur.Record = decode[interactions.Record](b)
	}
	return cur
}

// commit stores next and its transition under key, or fails without
// writing anything when either does not encode. Callers hold db.mu and have
// checked next.
func (db *DB) commit(key interactions.Key, caller *interactions.Caller, auth interactions.Authority, next *interactions.Record, tr *interactions.Transition) error {
	b, err := json.Marshal(next)
	if err != nil {
		return err
	}
	var tb []byte
	if tr != nil {
		if tb, err = json.Marshal(tr); err != nil {
			return err
		}
	}
	db.cards[key] = b
	db.history[key] = append(db.history[key], b)
	c := Commit{Key: key, Authority: auth, Next: *decode[interactions.Record](b)}
	if caller != nil {
		cc := *caller
		c.Caller = &cc
	}
	if tr != nil {
		db.transitions[key] = append(db.transitions[key], tb)
		c.Transition = decode[interactions.Transition](tb)
	}
	db.commits = append(db.commits, c)
	return nil
}

// Keys returns the keys of every stored card, sorted.
func (db *DB) Keys() []interactions.Key {
	db.mu.Lock()
	defer db.mu.Unlock()
	return slices.SortedFunc(maps.Keys(db.cards), func(a, b interactions.Key) int {
		if c := strings.Compare(a.Conversation, b.Conversation); c != 0 {
			return c
		}
		return strings.Compare(a.CorrelationID, b.CorrelationID)
	})
}

// History returns every committed version of the card under key, oldest
// first.
func (db *DB) History(key interactions.Key) []interactions.Record {
	db.mu.Lock()
	defer db.mu.Unlock()
	return decodeAll[interactions.Record](db.history[key])
}

// Transitions returns the workflow transitions stored for the card under
// key, oldest first.
func (db *DB) Transitions(key interactions.Key) []interactions.Transition {
	db.mu.Lock()
	defer db.mu.Unlock()
	return decodeAll[interactions.Transition](db.transitions[key])
}

// Commits returns every commit, oldest first.
func (db *DB) Commits() []Commit {
	db.mu.Lock()
	defer db.mu.Unlock()
	return slices.Clone(db.commits)
}

// decodeAll is decode of each of bs, in order, as values.
func decodeAll[T any](bs [][]byte) []T {
	out := make([]T, 0, len(bs))
	for _, b := range bs {
		out = append(out, *decode[T](b))
	}
	return out
}

// decode is json.Unmarshal into a fresh T for bytes encode wrote.
func decode[T any](b []byte) *T {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		panic("interactionstest: decode: " + err.Error()) // only bytes json.Marshal wrote are decoded
	}
	return &v
}
