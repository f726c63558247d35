package interactions

import (
	"context"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// NewCard is a card the backend opens: its key, the one caller it is bound
// to (with [Key.Conversation] this is the card's Scope), what it asks, and the
// server-owned schema its answers are validated against.
type NewCard struct {
	Key      Key
	Answerer Caller
	Spec     cards.CardSpec
	Schema   SchemaRef
}

// The backend operations below act for the host's workflow, not for a
// person: they take no Caller, and a host must never reach them from a
// request without its own authorization. Each runs decide once in
// Store.Transact and follows the same acknowledgement rule as Answer: after a
// lost acknowledgement, one read; the change is returned with Reconciled
// set if it is stored, ErrNeedsReconciliation otherwise.

// Open stores a new pending card at revision 1, created now, expiring at
// now + Spec.TimeoutMs when that is positive. It stores no Transition.
//
// Refusals: [refusal.ErrInvalidCard] (an empty or over-long id, an Answerer naming
// neither a principal nor a public owner, a schema reference without id or
// with a revision below 1, a negative timeout), [refusal.ErrCardExists],
// [refusal.ErrCheckpointWriteFailed], [refusal.ErrNeedsReconciliation].
func (r *Resolver) Open(ctx context.Context, card NewCard) (Record, error) {
	if err := r.checkNewCard(card); err != nil {
		return Record{}, err
	}
	decide := func(now int64, cur Current) (Change, error) {
		if cur.Record != nil {
			return Change{}, refusal.New(refusal.CodeCardExists, "", "a card is already stored under this key")
		}
		next := &Record{
			Version: RecordVersion, Key: card.Key,
			Scope: Scope{Conversation: card.Key.Conversation, Caller: card.Answerer},
			Spec:  card.Spec, Schema: card.Schema, Revision: 1, Status: StatusPending, CreatedAt: now,
		}
		next.ExpiresAt = expiresAt(now, card.Spec)
		return Change{Next: cloneRecord(next)}, nil
	}
	res, err := r.transact(ctx, card.Key, nil, decide, sameChange)
	return res.Record, err
}

// Revise replaces the spec and schema of a pending card (a metadata change)
// and advances its revision; the deadline becomes CreatedAt +
// spec.TimeoutMs. Answers validated against the previous revision are then
// refused with [refusal.ErrStaleRevision] or [refusal.ErrSchemaMismatch]. It stores no
// Transition.
//
// Refusals: [refusal.ErrInvalidCard], [refusal.ErrCardNotFound], the late refusals of a closed
// card ([refusal.ErrAlreadyAnswered], [refusal.ErrAnswerExpired], [refusal.ErrCardCancelled],
// [refusal.ErrCardSuperseded]), [refusal.ErrUnsupportedVersion], [refusal.ErrCheckpointWriteFailed],
// [refusal.ErrNeedsReconciliation].
func (r *Resolver) Revise(ctx context.Context, key Key, spec cards.CardSpec, schema SchemaRef) (Record, error) {
	if err := r.checkMetadata(key, spec, schema); err != nil {
		return Record{}, err
	}
	decide := func(now int64, cur Current) (Change, error) {
		rec, err := pendingRecord(key, cur, now)
		if err != nil {
			return Change{}, err
		}
		next := cloneRecord(rec)
		next.Spec, next.Schema = spec, schema
		next.ExpiresAt = expiresAt(rec.CreatedAt, spec)
		next.Revision++
		return Change{Next: cloneRecord(next)}, nil
	}
	res, err := r.transact(ctx, key, nil, decide, sameChange)
	return res.Record, err
}

// Cancel closes a pending card as cancelled, for example because its turn
// was cancelled, and stores the Transition. reason is informative.
//
// Refusals: [refusal.ErrCardNotFound], the late refusals of a closed card (a card
// already cancelled gives [refusal.ErrCardCancelled]), [refusal.ErrUnsupportedVersion],
// [refusal.ErrCheckpointWriteFailed], [refusal.ErrNeedsReconciliation].
func (r *Resolver) Cancel(ctx context.Context, key Key, reason string) (Result, error) {
	if err := checkInput(reason); err != nil {
		return Result{}, err
	}
	return r.close(ctx, key, func(next *Record) {
		next.Status, next.Reason = StatusCancelled, reason
	})
}

// Supersede closes a pending card as replaced by the card whose correlation
// id is by (opened separately with Open), and stores the Transition.
//
// Refusals: [refusal.ErrInvalidCard] (by empty, over-long or the card's own id), and
// those of Cancel.
func (r *Resolver) Supersede(ctx context.Context, key Key, by string) (Result, error) {
	if err := checkInput(key.Conversation, key.CorrelationID, by); err != nil {
		return Result{}, err
	}
	if !validID(by) || by == key.CorrelationID {
		return Result{}, refusal.New(refusal.CodeInvalidCard, "", "a card is superseded by another card's correlation id")
	}
	return r.close(ctx, key, func(next *Record) {
		next.Status, next.SupersededBy = StatusSuperseded, by
	})
}

// Expire closes a pending card whose deadline has passed as expired and
// stores the Transition; a sweeper calls it. An answer arriving after the
// deadline is refused with [refusal.ErrAnswerExpired] whether or not Expire ran.
//
// Refusals: [refusal.ErrNotExpired] (the deadline has not passed, or the card has
// none), and those of Cancel (a card already expired gives
// [refusal.ErrAnswerExpired]).
func (r *Resolver) Expire(ctx context.Context, key Key) (Result, error) {
	if err := checkInput(key.Conversation, key.CorrelationID); err != nil {
		return Result{}, err
	}
	if !validKey(key) {
		return Result{}, errNotFound()
	}
	decide := func(now int64, cur Current) (Change, error) {
		rec, err := backendRecord(key, cur)
		if err != nil {
			return Change{}, err
		}
		if rec.Status != StatusPending {
			return Change{}, closedRefusal(rec, now)
		}
		if !rec.Expired(now) {
			return Change{}, refusal.New(refusal.CodeNotExpired, "", "the card's deadline has not passed")
		}
		next := cloneRecord(rec)
		next.Revision++
		next.Status, next.ClosedAt = StatusExpired, now
		return Change{Next: next, Transition: transitionOf(next)}, nil
	}
	return r.transact(ctx, key, nil, decide, sameChange)
}

// close runs a backend closing transition: set is applied to a copy of the
// pending record, which then advances one revision and closes now.
func (r *Resolver) close(ctx context.Context, key Key, set func(next *Record)) (Result, error) {
	if err := checkInput(key.Conversation, key.CorrelationID); err != nil {
		return Result{}, err
	}
	if !validKey(key) {
		return Result{}, errNotFound()
	}
	decide := func(now int64, cur Current) (Change, error) {
		rec, err := pendingRecord(key, cur, now)
		if err != nil {
			return Change{}, err
		}
		next := cloneRecord(rec)
		set(next)
		next.Revision++
		next.ClosedAt = now
		return Change{Next: next, Transition: transitionOf(next)}, nil
	}
	return r.transact(ctx, key, nil, decide, sameChange)
}

// backendRecord returns the record under key for a backend operation.
func backendRecord(key Key, cur Current) (*Record, error) {
	rec := cur.Record
	if rec == nil || rec.Key != key || rec.Scope.Conversation != key.Conversation {
		return nil, errNotFound()
	}
	return rec, checkVersion(rec)
}

// pendingRecord returns the record under key when it is pending and its
// deadline has not passed at now, and the typed refusal otherwise.
func pendingRecord(key Key, cur Current, now int64) (*Record, error) {
	rec, err := backendRecord(key, cur)
	if err != nil {
		return nil, err
	}
	return rec, closedRefusal(rec, now)
}

// expiresAt is the deadline of a card created at createdAt: createdAt +
// TimeoutMs, or 0 without a timeout.
func expiresAt(createdAt int64, spec cards.CardSpec) int64 {
	if spec.TimeoutMs <= 0 {
		return 0
	}
	return createdAt + spec.TimeoutMs
}

// checkNewCard refuses a card the rules of Record do not allow.
func (r *Resolver) checkNewCard(c NewCard) error {
	if err := checkInput(callerTexts(c.Answerer)...); err != nil {
		return err
	}
	if checkCaller(c.Answerer) != nil {
		return refusal.New(refusal.CodeInvalidCard, "", "a card is bound to a principal or a public owner, each at most 256 bytes")
	}
	return r.checkMetadata(c.Key, c.Spec, c.Schema)
}

// checkMetadata refuses a key, spec or schema reference the rules of Record
// do not allow, and a spec CardRules refuses.
func (r *Resolver) checkMetadata(key Key, spec cards.CardSpec, schema SchemaRef) error {
	if err := checkInput(key.Conversation, key.CorrelationID, schema.ID); err != nil {
		return err
	}
	if err := checkSpecInput(spec); err != nil {
		return err
	}
	switch {
	case !validKey(key):
		return refusal.New(refusal.CodeInvalidCard, "", "conversation and correlation id must be 1 to 256 bytes")
	case !validID(schema.ID) || schema.Revision < 1:
		return refusal.New(refusal.CodeInvalidCard, "", "a card needs a schema id and a revision of at least 1")
	}
	return r.cardRules(spec)
}
