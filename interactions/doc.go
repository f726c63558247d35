// Package interactions is the InteractionResolver of the chat contract
// (docs/contract.md sections 3 and 13.2): when a model pauses a turn to ask a
// person a card, it lands that person's answer exactly once, on the card it
// targets, only from the caller the card is bound to, and keeps the pending
// and terminal records in the host's own store so that any worker, including
// a fresh one after a restart, recovers them.
//
// It uses the card types of package cards, as the root package does, and
// imports no validator and no database driver: the host supplies a Store
// (its card/session store), a Validator of answer values (the jsonschema
// subpackage provides one) and the card rules (the root package's ValidateCardSpec). Use it when
// answers must survive retries, races and restarts; a host that only renders
// cards needs chatprotocol alone.
//
// # The answer flow
//
//	caller := /* from the host's session, never from the request body */
//	resp, err := chatprotocol.ParseCardResponse(body) // strict: invalid-card for "ACTION", duplicates …
//	res, err := resolver.Answer(ctx, caller, key, interactions.Submission{ID: idempotencyKey, Response: resp})
//
// Read the request body with the root package's ParseCardResponse, not
// encoding/json, which matches "ACTION" to action and keeps the last of
// duplicated names, so that the answer stored is the one every later
// reader sees. (This package does not call it: it imports no validator.)
// The subpackage answerhttp is that HTTP handler, with one mapping from
// refusal code to status; use it rather than writing one.
//
// Answer reads the card, validates a submit's value against the card's
// server-owned schema outside any transaction, then runs one [Store.Transact]
// that rechecks, at the clock's current time and under one fence, the
// caller's current authority and the card's scope, the revision and schema
// that were validated, the deadline and the card's status, and stores the
// terminal record with its workflow Transition in the same commit. The
// backend opens cards (Open), changes them (Revise), and closes them
// (Cancel, Supersede, Expire); Read and Lookup recover state without
// advancing it.
//
// Every refusal is an [*refusal.Error] with a stable Code; the sentinels ([refusal.ErrAlreadyAnswered]
// …) tell the cases apart: a duplicate of a stored submission, its id
// reused with another action or value, an answer after another one, after
// the deadline, after cancellation or supersession, against a stale
// revision or an old schema, and a card that does not exist or is not the
// caller's (the same refusal, so that existence is not revealed).
//
// # Stores
//
// What a [Store] must guarantee (one fence, one call of the callback, an
// atomic outcome, honest errors), and why a read then an update, or a lock
// in one process, is no such fence, is section 13.5 of the contract. The kit
// [github.com/Papercusp/chat-protocol-go/interactions/interactionstest]
// checks a host's store against it. When a commit's acknowledgement is
// lost, the Resolver reads once and returns the stored record marked
// reconciled, or [refusal.ErrNeedsReconciliation] (section 13.2, item 4).
//
// # Time
//
// The clock is [Options.Clock] ([time.Now] by default). A card created at
// CreatedAt with Spec.TimeoutMs > 0 expires at CreatedAt + TimeoutMs, in
// epoch milliseconds, that instant included. Deadlines are judged with the
// clock read inside the fence.
//
// # Security considerations
//
// Authority comes only from the Caller the host authenticated and from the
// store's current authorization rows, never from the submission: the body's
// correlation id must match the request's key and may not name another
// card, a submission's revision can only narrow what is accepted, and the
// schema is looked up from the stored card. A card bound to another
// conversation, principal, tenant, customer or public owner is refused
// exactly as a missing one (same code, same message). Submitted values are
// parsed strictly (RFC 7493: duplicate member names and invalid UTF-8
// refused), limited in size ([Options.MaxValueBytes]), canonicalised, and the
// canonical bytes are what is validated, digested and stored, so the
// validator, the store and the workflow read one value. The backend methods
// (Open, Revise, Cancel, Supersede, Expire, Lookup) check no person's
// authority: a host must not expose them to requests.
//
// A refusal's Code and Path are safe to send to a client; its Message and
// its cause (Unwrap) are not, since they wrap the store's own error text
// (a PostgreSQL message included): log them, never write err.Error() into
// a response.
package interactions
