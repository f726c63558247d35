package interactionstest

import (
	"context"
	"fmt"
	"sync"

	"github.com/Papercusp/chat-protocol-go/interactions"
)

// Broken names a known-broken way to implement [interactions.Store]
// ([DB.OpenBroken]). Each one looks plausible, passes a single-threaded happy
// path, and loses an answer, lands two, or lets a revoked caller answer
// under some interleaving. [TestStore] and Check must catch every one of
// them, and the simulation in interactions' tests must catch the unfenced
// ones; they exist only for that. Never use one for anything else.
type Broken int

// The known-broken stores.
const (
	// Sound is no defect: the zero Broken, [DB.Open]'s store.
	Sound Broken = iota
	// BrokenReadThenWrite reads the card, runs the callback, then writes
	// the result with an unconditional update: two workers both see the
	// card pending and both answers "land" (the last one wins).
	BrokenReadThenWrite
	// BrokenProcessLock wraps read-then-write in a mutex of its own worker:
	// correct within one process, broken across two.
	BrokenProcessLock
	// BrokenCachedAuthority remembers each caller's authority the first
	// time its worker reads it: a revoked caller can still answer.
	BrokenCachedAuthority
	// BrokenUnfencedAuthority locks the card row but reads authority
	// without holding it against change: a revocation that commits while
	// the answer is being decided does not stop the answer.
	BrokenUnfencedAuthority
	// BrokenLostTransition writes the record but not its workflow
	// transition: the paused turn is never resumed.
	BrokenLostTransition
	// BrokenRetriesCallback runs the callback again after a (simulated)
	// serialization failure, deciding twice.
	BrokenRetriesCallback
	// BrokenTrustsNext writes the returned record under its own key,
	// without checking it is the locked card or that the revision advances.
	BrokenTrustsNext
	// BrokenWritesReadOnly touches the record on a read-only result
	// (rewrites it with the revision advanced, like an updated_at column).
	BrokenWritesReadOnly
	// BrokenSwallowsRefusal returns nil when the callback refuses.
	BrokenSwallowsRefusal
)

// AllBroken returns every known-broken store, Sound excluded.
func AllBroken() []Broken {
	return []Broken{
		BrokenReadThenWrite, BrokenProcessLock, BrokenCachedAuthority, BrokenUnfencedAuthority,
		BrokenLostTransition, BrokenRetriesCallback, BrokenTrustsNext, BrokenWritesReadOnly,
		BrokenSwallowsRefusal,
	}
}

// String names the defect, in the words of the check names.
func (b Broken) String() string {
	names := map[Broken]string{
		Sound:               "sound",
		BrokenReadThenWrite: "read-then-write", BrokenProcessLock: "process-lock",
		BrokenCachedAuthority: "cached-authority", BrokenUnfencedAuthority: "unfenced-authority",
		BrokenLostTransition: "lost-transition", BrokenRetriesCallback: "retries-callback",
		BrokenTrustsNext: "trusts-next", BrokenWritesReadOnly: "writes-read-only",
		BrokenSwallowsRefusal: "swallows-refusal",
	}
	if n, ok := names[b]; ok {
		return n
	}
	return fmt.Sprintf("unknown-broken-%d", int(b))
}

// OpenBroken returns a fresh worker's store over db that is broken in the
// way kind says; opts may be nil (Pause is honoured, Fault is not). With
// Sound it is [DB.Open](opts).
func (db *DB) OpenBroken(kind Broken, opts *StoreOptions) interactions.Store {
	if kind == Sound {
		return db.Open(opts)
	}
	s := &brokenStore{db: db, kind: kind, cache: map[interactions.Caller]interactions.Authority{}}
	if opts != nil {
		s.pause = opts.Pause
	}
	return s
}

// brokenStore is one worker of a known-broken store.
type brokenStore struct {
	db    *DB
	kind  Broken
	pause func()
	local sync.Mutex // BrokenProcessLock's lock, this worker's only
	mu    sync.Mutex // guards cache
	cache map[interactions.Caller]interactions.Authority
}

// step runs f under the database lock, after the pause: one statement.
func (s *brokenStore) step(f func()) {
	if s.pause != nil {
		s.pause()
	}
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	f()
}

// authority returns the caller's authority, from this worker's cache for
// BrokenCachedAuthority. Callers hold db.mu.
func (s *brokenStore) authority(caller *interactions.Caller, conversation string) interactions.Authority {
	if s.kind != BrokenCachedAuthority || caller == nil {
		return s.db.authority(caller, conversation)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.cache[*caller]
	if !ok {
		a = s.db.authority(caller, conversation)
		s.cache[*caller] = a
	}
	return a
}

// Read implements [interactions.Store].
func (s *brokenStore) Read(ctx context.Context, key interactions.Key, caller *interactions.Caller) (interactions.Current, error) {
	if err := ctx.Err(); err != nil {
		return interactions.Current{}, err
	}
	var cur interactions.Current
	s.step(func() {
		cur = s.db.current(key, caller)
		cur.Authority = s.authority(caller, key.Conversation)
	})
	return cur, nil
}

// Transact implements [interactions.Store], brokenly.
func (s *brokenStore) Transact(ctx context.Context, key interactions.Key, caller *interactions.Caller, fn interactions.TxFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	switch s.kind {
	case BrokenReadThenWrite:
		return s.readThenWrite(key, caller, fn)
	case BrokenProcessLock:
		s.local.Lock()
		defer s.local.Unlock()
		return s.readThenWrite(key, caller, fn)
	case BrokenUnfencedAuthority:
		return s.unfencedAuthority(key, caller, fn)
	}
	var err error
	s.step(func() {
		cur := s.db.current(key, caller)
		cur.Authority = s.authority(caller, key.Conversation)
		var ch interactions.Change
		if s.kind == BrokenRetriesCallback {
			_, _ = fn(cur) // "serialization failure": decide again
		}
		ch, err = fn(cur)
		if err != nil {
			if s.kind == BrokenSwallowsRefusal {
				err = nil
			}
			return
		}
		switch s.kind {
		case BrokenTrustsNext:
			if ch.Next != nil {
				err = s.db.commit(ch.Next.Key, caller, cur.Authority, ch.Next, ch.Transition)
			}
			return
		case BrokenWritesReadOnly:
			if ch.Next == nil && cur.Record != nil {
				touched := *cur.Record
				touched.Revision++
				ch.Next = &touched
			}
		case BrokenLostTransition:
			ch.Transition = nil
		}
		if err = ch.Check(key, cur.Record); err != nil && s.kind != BrokenLostTransition && s.kind != BrokenWritesReadOnly {
			return
		}
		err = nil
		if ch.Next != nil {
			err = s.db.commit(key, caller, cur.Authority, ch.Next, ch.Transition)
		}
	})
	return err
}

// readThenWrite reads in one statement, decides outside any lock and
// writes in another statement without checking that nothing changed.
func (s *brokenStore) readThenWrite(key interactions.Key, caller *interactions.Caller, fn interactions.TxFunc) error {
	var cur interactions.Current
	s.step(func() { cur = s.db.current(key, caller) })
	ch, err := fn(cur)
	if err != nil || ch.Next == nil {
		return err
	}
	s.step(func() { err = s.db.commit(key, caller, cur.Authority, ch.Next, ch.Transition) })
	return err
}

// unfencedAuthority serialises workers on the card (a row lock of the
// database, not of the process) but reads the caller's authority with a
// statement that does not hold it, so a revocation can commit while the
// callback decides.
func (s *brokenStore) unfencedAuthority(key interactions.Key, caller *interactions.Caller, fn interactions.TxFunc) error {
	row := s.db.rowLock(key)
	row.Lock()
	defer row.Unlock()
	var cur interactions.Current
	s.step(func() { cur = s.db.current(key, caller) })
	ch, err := fn(cur)
	if err != nil {
		return err
	}
	s.step(func() {
		if err = ch.Check(key, s.db.current(key, nil).Record); err == nil && ch.Next != nil {
			err = s.db.commit(key, caller, cur.Authority, ch.Next, ch.Transition)
		}
	})
	return err
}
