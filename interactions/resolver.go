package interactions

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Resolver is the InteractionResolver of docs/contract.md section 13.2: it
// opens cards, lands each person's answer exactly once on the card it targets
// and only from the caller the card is bound to, closes cards for the backend
// (cancel, expire, supersede), and recovers pending and terminal state,
// keeping version-1 records in the host's store through Store.
//
// A Resolver holds no state of its own besides its configuration and the
// in-process waiters of Wait: any number of Resolvers in any number of
// processes may serve the same store, and a fresh one recovers everything
// from it. Its methods are safe for concurrent use. The zero Resolver is
// not usable: make one with New.
type Resolver struct {
	store         Store
	validator     Validator
	cardRules     func(cards.CardSpec) error
	clock         func() time.Time
	maxValueBytes int
	obs           observe.Observer
	onClose       func(context.Context, Result)
	waiters       waiters
}

// Options configures a Resolver. CardRules is required; every other zero
// field means its default.
type Options struct {
	// CardRules checks a card's shape when Open or Revise is asked for it
	// (docs/contract.md section 3.2): the root package's ValidateCardSpec, which
	// this package cannot import without the validator it uses. A spec it
	// refuses is refused with its error (code invalid-card), and nothing
	// is stored.
	CardRules func(spec cards.CardSpec) error
	// Clock returns the current time; nil means [time.Now]. Deadlines,
	// creation and closing times are read from it, inside the store's fence
	// when they decide a write.
	Clock func() time.Time
	// MaxValueBytes is the largest submitted value accepted, in bytes of
	// JSON; 0 means [DefaultMaxValueBytes] (64 KiB). A larger value is
	// refused with [refusal.ErrFrameTooLarge] before the store is touched.
	MaxValueBytes int
	// Observer receives each Answer's submission and outcome (stored,
	// duplicate, late or refused), with the card's identity and the
	// refusal code, never the submitted value; nil means silent.
	// [observe.NewSlog](logger) turns on structured logs.
	Observer observe.Observer
	// OnClose, when set, is called after this Resolver committed a card's
	// terminal record (an answer, decline or cancel response, Cancel,
	// Expire, Supersede; also when the commit is found after a lost
	// acknowledgement), with the Result, once Wait's waiters in this
	// process are woken. A host with several instances publishes the close
	// there for the others' [Resolver.Notify] (docs/contract.md section 13.2).
	// It runs on the closing call's goroutine: keep it short.
	OnClose func(ctx context.Context, res Result)
}

// New returns a Resolver over store that validates submitted values with
// validator. Both are required: New returns an error (not a refusal) when
// either is nil or MaxValueBytes is negative.
func New(store Store, validator Validator, opts *Options) (*Resolver, error) {
	if store == nil || validator == nil {
		return nil, errors.New("interactions: New needs a Store and a Validator")
	}
	if opts == nil || opts.CardRules == nil {
		return nil, errors.New("interactions: New needs Options.CardRules (the root package's ValidateCardSpec)")
	}
	if opts.MaxValueBytes < 0 {
		return nil, errors.New("interactions: negative MaxValueBytes")
	}
	r := &Resolver{store: store, validator: validator, cardRules: opts.CardRules, clock: time.Now,
		maxValueBytes: DefaultMaxValueBytes, obs: opts.Observer, onClose: opts.OnClose}
	if opts.Clock != nil {
		r.clock = opts.Clock
	}
	if opts.MaxValueBytes > 0 {
		r.maxValueBytes = opts.MaxValueBytes
	}
	return r, nil
}

// Result is the outcome of a call that writes.
//
// Record is the card's record after the call: the one this call stored, or,
// with [refusal.ErrDuplicateAnswer], the one already stored. Transition is the
// workflow transition this call stored with it (nil when the change had
// none, such as Open). Reconciled is true when the store lost the write's
// acknowledgement and the one read that followed found this call's change
// committed.
type Result struct {
	Record     Record
	Transition *Transition
	Reconciled bool
}

// now returns the clock's time in Unix epoch milliseconds.
func (r *Resolver) now() int64 { return r.clock().UnixMilli() }

// decideFunc decides, inside the store's fence, the change a call makes
// from the current state at now, or refuses.
type decideFunc func(now int64, cur Current) (Change, error)

// recogniseFunc reports whether stored holds the change next would have
// made; it decides the one read after a lost acknowledgement.
type recogniseFunc func(stored, next *Record) bool

// transact runs decide once inside the store's fence (transactOnce) and,
// when that stored a terminal record, wakes the card's waiters.
func (r *Resolver) transact(ctx context.Context, key Key, caller *Caller, decide decideFunc, recognise recogniseFunc) (Result, error) {
	res, err := r.transactOnce(ctx, key, caller, decide, recognise)
	if err == nil && res.Transition != nil {
		r.closed(ctx, key, res)
	}
	return res, err
}

// transactOnce runs decide once inside the store's fence and sorts out what
// happened: a refusal, a commit, a definite failure, or an unknown outcome,
// which gets exactly one read and never a second write (docs/contract.md
// section 13.2).
func (r *Resolver) transactOnce(ctx context.Context, key Key, caller *Caller, decide decideFunc, recognise recogniseFunc) (Result, error) {
	var (
		mu      sync.Mutex
		calls   int
		change  Change
		refused error
		seen    *Record
	)
	err := r.store.Transact(ctx, key, caller, func(cur Current) (Change, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls > 1 {
			// A store that re-runs the callback may already have committed
			// the first run: refuse this one and treat the outcome as
			// unknown below.
			return Change{}, refusal.New(refusal.CodeNeedsReconciliation, "", "store invoked the callback twice")
		}
		seen = cloneRecord(cur.Record)
		change, refused = decide(r.now(), cur)
		if refused != nil {
			return Change{}, refused
		}
		return change, nil
	})
	mu.Lock()
	defer mu.Unlock()
	switch {
	case calls == 0 && err == nil:
		return Result{}, refusal.New(refusal.CodeCheckpointWriteFailed, "", "store returned without invoking the callback; nothing was written")
	case calls == 0:
		return Result{}, refusal.Wrap(refusal.CodeCheckpointWriteFailed, "", "store failed before the callback; nothing was written", err)
	case calls == 1 && refused != nil:
		if refusal.CodeOf(refused) == refusal.CodeDuplicateAnswer && seen != nil {
			return Result{Record: *seen}, refused
		}
		return Result{}, refused
	case calls == 1 && err == nil:
		if change.Next == nil {
			if seen == nil {
				return Result{}, errNotFound()
			}
			return Result{Record: *seen}, nil
		}
		return Result{Record: *cloneRecord(change.Next), Transition: change.Transition}, nil
	case calls == 1 && refusal.CodeOf(err) == refusal.CodeCheckpointWriteFailed:
		return Result{}, err
	}
	return r.reconcile(ctx, key, caller, change, recognise, err)
}

// reconcile is the one read after a write whose outcome is unknown: it
// returns the stored change when it is this call's and the caller (when
// there is one) is still authorized to read the card, and
// ErrNeedsReconciliation otherwise. It never writes.
func (r *Resolver) reconcile(ctx context.Context, key Key, caller *Caller, change Change, recognise recogniseFunc, cause error) (Result, error) {
	cur, err := r.store.Read(ctx, key, caller)
	if err != nil {
		return Result{}, refusal.Wrap(refusal.CodeNeedsReconciliation, "", "write acknowledgement lost and the read that follows failed", errors.Join(cause, err))
	}
	if caller != nil {
		if _, err := authorize(key, *caller, cur); err != nil {
			// The write may have committed; a caller whose authority went
			// away meanwhile learns only that the outcome is unknown.
			return Result{}, refusal.Wrap(refusal.CodeNeedsReconciliation, "", "write acknowledgement lost and the caller may no longer read the card", cause)
		}
	}
	if change.Next != nil && recognise(cur.Record, change.Next) {
		return Result{Record: *cloneRecord(cur.Record), Transition: change.Transition, Reconciled: true}, nil
	}
	return Result{}, refusal.Wrap(refusal.CodeNeedsReconciliation, "", "write acknowledgement lost and this change is not stored", cause)
}

// cloneRecord returns a deep copy of rec (nil for nil), so that a Result
// never shares memory with a store's buffers.
func cloneRecord(rec *Record) *Record {
	if rec == nil {
		return nil
	}
	b, err := json.Marshal(rec)
	if err != nil {
		c := *rec
		return &c
	}
	var c Record
	if err := json.Unmarshal(b, &c); err != nil {
		c = *rec
	}
	return &c
}

// errNotFound is the refusal for a missing card and for a card bound to
// another scope alike: same code, same message, no path.
func errNotFound() error { return refusal.New(refusal.CodeCardNotFound, "", "no such card") }

// errUnauthorized is the refusal for a caller without current authority.
func errUnauthorized() error {
	return refusal.New(refusal.CodeUnauthorized, "", "the caller has no current authorization")
}

// validID reports whether s is a non-empty id of at most MaxIDBytes.
func validID(s string) bool { return s != "" && len(s) <= MaxIDBytes }

// validKey reports whether both members of key are valid ids.
func validKey(key Key) bool { return validID(key.Conversation) && validID(key.CorrelationID) }

// checkCaller refuses a caller that names nobody or carries an over-long
// member.
func checkCaller(c Caller) error {
	if c.Principal == "" && c.PublicOwner == "" {
		return errUnauthorized()
	}
	for _, s := range []string{c.Principal, c.Tenant, c.Customer, c.PublicOwner} {
		if len(s) > MaxIDBytes {
			return errUnauthorized()
		}
	}
	return nil
}

// authorize checks a person's request against the state a store read: the
// caller must be currently authorized as the identity the host
// authenticated, and the card must exist under key with exactly the scope
// the caller holds now. A missing card and a foreign one give the same
// refusal. It returns the record.
func authorize(key Key, caller Caller, cur Current) (*Record, error) {
	a := cur.Authority
	if !a.Active || a.Scope.Caller != caller {
		return nil, errUnauthorized()
	}
	rec := cur.Record
	if rec == nil || rec.Key != key || rec.Scope != a.Scope || rec.Scope.Conversation != key.Conversation {
		return nil, errNotFound()
	}
	return rec, checkVersion(rec)
}

// checkVersion refuses a record of a version other than RecordVersion.
func checkVersion(rec *Record) error {
	if rec.Version != RecordVersion {
		return refusal.New(refusal.CodeUnsupportedVersion, "/version", "stored record is not version 1")
	}
	return nil
}

// closedRefusal returns the typed refusal for a card that can no longer
// change at now, telling the late cases apart, or nil for a pending card
// whose deadline has not passed.
func closedRefusal(rec *Record, now int64) error {
	switch rec.Status {
	case StatusPending:
		if rec.Expired(now) {
			return refusal.New(refusal.CodeAnswerExpired, "", "the card's deadline has passed")
		}
		return nil
	case StatusAnswered, StatusDeclined:
		return refusal.New(refusal.CodeAlreadyAnswered, "", "the card was already answered")
	case StatusCancelled:
		return refusal.New(refusal.CodeCardCancelled, "", "the card was cancelled")
	case StatusExpired:
		return refusal.New(refusal.CodeAnswerExpired, "", "the card expired")
	case StatusSuperseded:
		return refusal.New(refusal.CodeCardSuperseded, "", "the card was superseded by "+rec.SupersededBy)
	}
	return refusal.New(refusal.CodeUnsupportedVersion, "/status", "stored record has an unknown status")
}
