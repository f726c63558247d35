package interactions

import (
	"context"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// View is a card as a read finds it. Status is the effective status at the
// time of the read: [StatusExpired] for a pending record whose deadline has
// passed although no expiry is stored yet, [Record.Status] otherwise.
type View struct {
	Record Record
	Status Status
}

// Read recovers the pending or terminal state of the card under key for a
// person, without advancing it, rechecking current authority
// (docs/contract.md section 13.2): the store reads the caller's current
// authority with the card, and the card is returned only to the caller it is
// bound to. A fresh worker uses it to pick up a card another worker opened or
// closed.
//
// Refusals: [refusal.ErrUnauthorized], [refusal.ErrCardNotFound] (missing or foreign, alike),
// [refusal.ErrUnsupportedVersion], [refusal.ErrStoreUnavailable].
func (r *Resolver) Read(ctx context.Context, caller Caller, key Key) (View, error) {
	if err := checkInput(append(callerTexts(caller), key.Conversation, key.CorrelationID)...); err != nil {
		return View{}, err
	}
	if err := checkCaller(caller); err != nil {
		return View{}, err
	}
	if !validKey(key) {
		return View{}, errNotFound()
	}
	cur, err := r.store.Read(ctx, key, &caller)
	if err != nil {
		return View{}, refusal.Wrap(refusal.CodeStoreUnavailable, "", "reading the card failed", err)
	}
	rec, err := authorize(key, caller, cur)
	if err != nil {
		return View{}, err
	}
	return r.view(rec), nil
}

// Lookup is Read for the backend (a worker resuming a turn): it checks no
// person's authority. Hosts must not reach it from a person's request.
//
// Refusals: [refusal.ErrCardNotFound], [refusal.ErrUnsupportedVersion], [refusal.ErrStoreUnavailable].
func (r *Resolver) Lookup(ctx context.Context, key Key) (View, error) {
	if err := checkInput(key.Conversation, key.CorrelationID); err != nil {
		return View{}, err
	}
	if !validKey(key) {
		return View{}, errNotFound()
	}
	cur, err := r.store.Read(ctx, key, nil)
	if err != nil {
		return View{}, refusal.Wrap(refusal.CodeStoreUnavailable, "", "reading the card failed", err)
	}
	rec, err := backendRecord(key, cur)
	if err != nil {
		return View{}, err
	}
	return r.view(rec), nil
}

// view returns a copy of rec with its effective status now.
func (r *Resolver) view(rec *Record) View {
	v := View{Record: *cloneRecord(rec), Status: rec.Status}
	if rec.Status == StatusPending && rec.Expired(r.now()) {
		v.Status = StatusExpired
	}
	return v
}
