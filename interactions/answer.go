package interactions

import (
	"context"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/Papercusp/chat-protocol-go/internal/wire"
)

// Answer lands a person's response on the card under key, exactly once
// (docs/contract.md section 13.2).
//
// caller is the identity the host authenticated for this request; key and
// sub come from the request. Answer reads the card once to learn its schema
// and revision, validates a submit's value outside any transaction, then,
// inside [Store.Transact] at the clock's current time, rechecks together the
// caller's current authority and the card's scope, the validated revision
// and schema, the deadline and the card's status, and stores the terminal
// record and its Transition in one commit.
//
// Refusals: [refusal.ErrUnauthorized], [refusal.ErrCardNotFound] (no card, or another's),
// [refusal.ErrInvalidAnswer] or [refusal.ErrFrameTooLarge] (a malformed submission or a value
// the schema refuses), [refusal.ErrUnknownSchema], [refusal.ErrDuplicateAnswer] (this very
// submission is stored; the Result holds the record),
// [refusal.ErrIdempotencyKeyReused] (the stored answer has this submission id with
// another action or value), [refusal.ErrAlreadyAnswered] (another submission's
// answer), [refusal.ErrAnswerExpired], [refusal.ErrCardCancelled], [refusal.ErrCardSuperseded],
// [refusal.ErrStaleRevision], [refusal.ErrSchemaMismatch], [refusal.ErrUnsupportedVersion],
// [refusal.ErrStoreUnavailable] and [refusal.ErrCheckpointWriteFailed] (nothing was written).
// After a lost commit acknowledgement Answer reads once: the stored answer
// with Reconciled set when it is this submission, else
// [refusal.ErrNeedsReconciliation] (also when the caller's authority or the card's
// scope changed meanwhile); it never writes again.
func (r *Resolver) Answer(ctx context.Context, caller Caller, key Key, sub Submission) (res Result, err error) {
	rep := answerReport{obs: r.obs, key: key}
	ctx = rep.submit(ctx)
	defer func() { rep.end(ctx, res, err) }()
	if err := checkInput(append(callerTexts(caller), key.Conversation, key.CorrelationID, sub.ID)...); err != nil {
		return Result{}, err
	}
	if err := checkCaller(caller); err != nil {
		return Result{}, err
	}
	if !validKey(key) {
		return Result{}, errNotFound()
	}
	ans, err := answerOf(key, sub, r.maxValueBytes)
	if err != nil {
		return Result{}, err
	}
	cur, err := r.store.Read(ctx, key, &caller)
	if err != nil {
		return Result{}, refusal.Wrap(refusal.CodeStoreUnavailable, "", "reading the card failed", err)
	}
	rec, err := checkAnswer(r.now(), key, caller, sub, ans, cur, nil)
	if err != nil {
		if refusal.CodeOf(err) == refusal.CodeDuplicateAnswer {
			return Result{Record: *cloneRecord(rec)}, err
		}
		return Result{}, err
	}
	validated := validated{schema: rec.Schema, revision: rec.Revision}
	if ans.Action == cards.CardActionSubmit {
		if err := r.validate(ctx, rec.Schema, ans); err != nil {
			return Result{}, err
		}
	}
	decide := func(now int64, cur Current) (Change, error) {
		rec, err := checkAnswer(now, key, caller, sub, ans, cur, &validated)
		if err != nil {
			return Change{}, err
		}
		next := cloneRecord(rec)
		next.Revision++
		next.Status = statusOf(ans.Action)
		next.ClosedAt = now
		a := ans
		next.Answer = &a
		return Change{Next: next, Transition: transitionOf(next)}, nil
	}
	recognise := func(stored, _ *Record) bool {
		return stored != nil && stored.Key == key && stored.Answer != nil && stored.Answer.sameSubmission(ans)
	}
	return r.transact(ctx, key, &caller, decide, recognise)
}

// validated is the schema and revision an answer was validated against.
type validated struct {
	schema   SchemaRef
	revision int64
}

// checkAnswer decides whether sub may land on the card in cur at now,
// telling every refusal apart. With want nil it is the early check on a
// plain read; inside the fence want is what was validated. It returns the
// record, also with ErrDuplicateAnswer.
func checkAnswer(now int64, key Key, caller Caller, sub Submission, ans Answer, cur Current, want *validated) (*Record, error) {
	rec, err := authorize(key, caller, cur)
	if err != nil {
		return nil, err
	}
	if rec.Status.Terminal() && rec.Answer != nil && rec.Answer.SubmissionID == ans.SubmissionID {
		if rec.Answer.sameSubmission(ans) {
			return rec, refusal.New(refusal.CodeDuplicateAnswer, "", "this submission is already stored")
		}
		return nil, refusal.New(refusal.CodeIdempotencyKeyReused, "", "the submission id is stored with another action or value")
	}
	if err := closedRefusal(rec, now); err != nil {
		return nil, err
	}
	if err := wire.CheckDecline(refusal.CodeInvalidAnswer, rec.Spec, ans.Action); err != nil {
		return nil, err
	}
	if want != nil && rec.Schema != want.schema {
		return nil, refusal.New(refusal.CodeSchemaMismatch, "", "the card's schema changed after validation")
	}
	if want != nil && rec.Revision != want.revision {
		return nil, refusal.New(refusal.CodeStaleRevision, "", "the card changed after validation")
	}
	if sub.Revision != 0 && sub.Revision != rec.Revision {
		return nil, refusal.New(refusal.CodeStaleRevision, "", "the card changed after it was shown")
	}
	return rec, nil
}

// validate runs the Validator on a submit's canonical value and gives its
// error a code.
func (r *Resolver) validate(ctx context.Context, ref SchemaRef, ans Answer) error {
	err := r.validator.Validate(ctx, ref, ans.Value)
	if err == nil || refusal.CodeOf(err) != "" {
		return err
	}
	return refusal.Wrap(refusal.CodeInvalidAnswer, "/value", "the value does not match the card's schema", err)
}

// statusOf is the terminal status a response action reaches.
func statusOf(action cards.CardAction) Status {
	switch action {
	case cards.CardActionSubmit:
		return StatusAnswered
	case cards.CardActionDecline:
		return StatusDeclined
	}
	return StatusCancelled
}
