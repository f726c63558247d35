package interactionstest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Op is a Store operation a Failpoint applies to.
type Op int

// The operations of a Store.
const (
	OpTransact Op = iota
	OpRead
)

// Fault is what a Failpoint makes a Store call do.
type Fault int

// The faults a Store can inject.
const (
	// FaultNone: the call behaves normally.
	FaultNone Fault = iota
	// FaultUnavailable: the call fails before touching the database (the
	// callback is not invoked) with [ErrUnavailable].
	FaultUnavailable
	// FaultRollback: the callback runs, the transaction is rolled back, and
	// Transact returns an error of code [refusal.CodeCheckpointWriteFailed]. On Read
	// it is [FaultUnavailable].
	FaultRollback
	// FaultLostAckCommitted: the transaction commits but its
	// acknowledgement is lost: Transact returns [ErrAckLost]. On Read it is
	// [FaultUnavailable].
	FaultLostAckCommitted
	// FaultLostAckNotCommitted: the commit never reaches the database and
	// Transact returns [ErrAckLost], the same error as [FaultLostAckCommitted],
	// so the caller cannot tell the two apart. On Read it is
	// [FaultUnavailable].
	FaultLostAckNotCommitted
)

// ErrAckLost is returned by Transact when the commit's acknowledgement was
// lost: the change may or may not be stored. Like a driver's network error
// it carries no code.
var ErrAckLost = errors.New("interactionstest: connection lost before the commit was acknowledged")

// ErrUnavailable is returned by a call that failed before reaching the
// database.
var ErrUnavailable = errors.New("interactionstest: database unavailable")

// Failpoint makes the next call of Op on a Store fail with Fault. Then,
// when set, runs after the fault took effect and after the database lock is
// released, before the call returns: a test uses it to let a competitor
// act in that gap.
type Failpoint struct {
	Op    Op
	Fault Fault
	Then  func()
}

// StoreOptions configures a Store; nil means defaults.
type StoreOptions struct {
	// Pause, when set, is called before every access to the database,
	// outside its lock. A deterministic scheduler yields to another worker
	// there.
	Pause func()
	// Fault, when set, is asked for the fault of every call that has no
	// injected Failpoint queued.
	Fault func(op Op, key interactions.Key) Fault
}

// Store is one worker's [interactions.Store] over a [DB]. It implements the
// seam as a PostgreSQL store must: card row, authority, callback and commit
// under one lock. It counts its calls and injects faults. It is safe for
// concurrent use.
type Store struct {
	db   *DB
	opts StoreOptions

	mu         sync.Mutex
	failpoints []Failpoint

	reads, transacts, calls atomic.Int64
}

// Open returns a fresh worker's Store over db; opts may be nil.
func (db *DB) Open(opts *StoreOptions) *Store {
	s := &Store{db: db}
	if opts != nil {
		s.opts = *opts
	}
	return s
}

// Inject queues failpoints; each applies to the next call of its Op.
func (s *Store) Inject(fps ...Failpoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failpoints = append(s.failpoints, fps...)
}

// Reads returns how many times Read was called.
func (s *Store) Reads() int { return int(s.reads.Load()) }

// Transacts returns how many times Transact was called.
func (s *Store) Transacts() int { return int(s.transacts.Load()) }

// Calls returns how many times a Transact invoked its callback.
func (s *Store) Calls() int { return int(s.calls.Load()) }

// fault returns the fault for the next call of op and the function to run
// before that call returns.
func (s *Store) fault(op Op, key interactions.Key) (Fault, func()) {
	s.mu.Lock()
	for i, fp := range s.failpoints {
		if fp.Op == op {
			s.failpoints = append(s.failpoints[:i:i], s.failpoints[i+1:]...)
			s.mu.Unlock()
			if fp.Then == nil {
				return fp.Fault, func() {}
			}
			return fp.Fault, fp.Then
		}
	}
	s.mu.Unlock()
	if s.opts.Fault != nil {
		return s.opts.Fault(op, key), func() {}
	}
	return FaultNone, func() {}
}

// pause calls the Pause option.
func (s *Store) pause() {
	if s.opts.Pause != nil {
		s.opts.Pause()
	}
}

// Transact implements [interactions.Store].
func (s *Store) Transact(ctx context.Context, key interactions.Key, caller *interactions.Caller, fn interactions.TxFunc) error {
	s.transacts.Add(1)
	fault, then := s.fault(OpTransact, key)
	defer then()
	if err := ctx.Err(); err != nil {
		return err
	}
	if fault == FaultUnavailable {
		return ErrUnavailable
	}
	s.pause()
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	cur := s.db.current(key, caller)
	s.calls.Add(1)
	change, err := fn(cur)
	if err != nil {
		return fmt.Errorf("interactionstest: callback refused: %w", err)
	}
	if err := change.Check(key, cur.Record); err != nil {
		return err
	}
	switch fault {
	case FaultRollback:
		return &refusal.Error{Code: refusal.CodeCheckpointWriteFailed, Message: "rolled back"}
	case FaultLostAckNotCommitted:
		return ErrAckLost
	}
	if change.Next != nil {
		if err := s.db.commit(key, caller, cur.Authority, change.Next, change.Transition); err != nil {
			return &refusal.Error{Code: refusal.CodeCheckpointWriteFailed, Message: "rolled back", Err: err}
		}
	}
	if fault == FaultLostAckCommitted {
		return ErrAckLost
	}
	return nil
}

// Read implements [interactions.Store].
func (s *Store) Read(ctx context.Context, key interactions.Key, caller *interactions.Caller) (interactions.Current, error) {
	s.reads.Add(1)
	fault, then := s.fault(OpRead, key)
	defer then()
	if err := ctx.Err(); err != nil {
		return interactions.Current{}, err
	}
	if fault != FaultNone {
		return interactions.Current{}, ErrUnavailable
	}
	s.pause()
	s.db.mu.Lock()
	defer s.db.mu.Unlock()
	return s.db.current(key, caller), nil
}
