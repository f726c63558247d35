package interactions

import (
	"context"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Store is the seam to the host's existing card/session store: the one
// interface a host implements (docs/contract.md section 13.2). The package
// doc's "Implementing Store" section states what an implementation must
// guarantee and why a read followed by an unconditional update, or a lock
// inside one process, is not an implementation; package interactionstest's TestStore
// checks an implementation against it.
//
// Implementations must be safe for concurrent use by many goroutines and by
// many processes (workers) over the same database.
type Store interface {
	// Transact runs one fenced read-modify-write of the card under key.
	//
	// Inside one database transaction it locks the card row (or observes
	// that there is none), reads the current Authority of caller (nil for a
	// backend operation: zero Authority) under the same fence, so that a
	// concurrent revocation either waits for the commit or makes it fail,
	// and invokes fn exactly once, synchronously, with both. When fn
	// returns an error, Transact commits nothing and returns an error for
	// which [errors.Is](err, thatError) holds. When fn returns a Change with a
	// nil Next, Transact writes nothing (a read-only result has no workflow
	// effect). Otherwise Transact checks that Next.Key is key and that
	// Next.Revision is the current revision plus one (1 when there was no
	// card), writes Next and, when set, the Transition atomically, and
	// commits before returning nil.
	//
	// Transact returns an error of code [refusal.CodeCheckpointWriteFailed] only when
	// it knows that nothing was committed (the transaction was rolled back
	// or never began). Any other error, notably a lost acknowledgement of
	// COMMIT, means the outcome is unknown; the Resolver then reads once and
	// never calls Transact again for that request. Transact never retries fn
	// itself.
	Transact(ctx context.Context, key Key, caller *Caller, fn TxFunc) error

	// Read returns the committed state of the card under key and the
	// current Authority of caller (nil: zero Authority), without locking
	// for update and without writing. A missing card is a Current with a
	// nil Record and a nil error. It never returns uncommitted data.
	Read(ctx context.Context, key Key, caller *Caller) (Current, error)
}

// TxFunc is the callback [Store.Transact] invokes once inside its fence. It is
// synchronous, does no I/O and must not retain cur.Record after returning.
type TxFunc func(cur Current) (Change, error)

// Current is what a Store reads inside its fence: the committed record under
// the key (nil when there is none) and the caller's current authority.
type Current struct {
	Record    *Record
	Authority Authority
}

// Authority is a caller's authorization as the store reads it now, from the
// host's own tables, inside the same transaction as the card row, so that
// both are fenced together (docs/contract.md section 13.2).
//
// Active is false when the caller has no current authorization at all
// (unknown, revoked, suspended). Scope is the scope the caller holds right
// now in the requested conversation: its current principal, tenant,
// customer and public owner, and [Scope.Conversation] equal to the key's
// conversation only while the caller may act in it ("" otherwise). The zero
// Authority authorizes nothing.
type Authority struct {
	Active bool
	Scope  Scope
}

// Change is what a [TxFunc] asks a Store to persist. A nil Next is a
// read-only result: nothing is written and Transition must be nil. A
// non-nil Next replaces the record; Transition, set exactly when Next is
// terminal, is stored in the same transaction.
type Change struct {
	Next       *Record
	Transition *Transition
}

// Check refuses a change that a Store must not persist for key, given the
// record cur it holds now (nil when none): a transition without a record,
// a record for another key or one that does not advance the revision by
// exactly one (1 for a new record), a terminal record without its
// transition, or a transition that does not describe the record. The error
// has code [refusal.CodeCheckpointWriteFailed] (nothing is written); nil means the
// change may be persisted. Store implementations call it inside their
// fence, before writing.
func (ch Change) Check(key Key, cur *Record) error {
	refuse := func(msg string) error {
		return &refusal.Error{Code: refusal.CodeCheckpointWriteFailed, Message: "store refused the change: " + msg}
	}
	next, tr := ch.Next, ch.Transition
	if next == nil {
		if tr != nil {
			return refuse("a transition without a record")
		}
		return nil
	}
	want := int64(1)
	if cur != nil {
		want = cur.Revision + 1
	}
	switch {
	case next.Key != key:
		return refuse("a record for another key")
	case next.Revision != want:
		return refuse("the revision does not advance by one")
	case next.Status.Terminal() != (tr != nil):
		return refuse("a terminal record and its transition go together")
	case tr != nil && (tr.Key != key || tr.Revision != next.Revision || tr.Status != next.Status):
		return refuse("the transition does not describe the record")
	}
	return nil
}
