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
// subpackage provides one) and the card rules (chatprotocol.ValidateCardSpec). Use it when
// answers must survive retries, races and restarts; a host that only renders
// cards needs chatprotocol alone.
//
// # The answer flow
//
//	caller := /* from the host's session, never from the request body */
//	resp, err := chatprotocol.ParseCardResponse(body) // strict: invalid-card for "ACTION", duplicates …
//	res, err := resolver.Answer(ctx, caller, key, interactions.Submission{ID: idempotencyKey, Response: resp})
//
// Read the request body with chatprotocol.ParseCardResponse, not
// encoding/json, which matches "ACTION" to action and keeps the last of
// duplicated names, so that the answer stored is the one every later
// reader sees. (This package does not call it: it imports no validator.)
// The subpackage answerhttp is that HTTP handler, with one mapping from
// refusal code to status; use it rather than writing one.
//
// Answer reads the card, validates a submit's value against the card's
// server-owned schema outside any transaction, then runs one Store.Transact
// that rechecks, at the clock's current time and under one fence, the
// caller's current authority and the card's scope, the revision and schema
// that were validated, the deadline and the card's status, and stores the
// terminal record with its workflow Transition in the same commit. The
// backend opens cards (Open), changes them (Revise), and closes them
// (Cancel, Supersede, Expire); Read and Lookup recover state without
// advancing it.
//
// Every refusal is an *Error with a stable Code; the sentinels (ErrAlreadyAnswered
// …) tell the cases apart: a duplicate of a stored submission, its id
// reused with another action or value, an answer after another one, after
// the deadline, after cancellation or supersession, against a stale
// revision or an old schema, and a card that does not exist or is not the
// caller's (the same refusal, so that existence is not revealed).
//
// # Implementing Store
//
// A Store must guarantee, for Transact(ctx, key, caller, fn):
//
//  1. One fence. The card row (or its absence), the caller's current
//     authority (the host's membership, tenant, customer and public-owner
//     rows) and the write are read and made in one database transaction,
//     and nothing that can change the outcome commits in between: the card
//     row is locked (PostgreSQL: SELECT ... FROM cards WHERE ... FOR
//     UPDATE), the authority rows are locked against change (FOR SHARE) or
//     the transaction is SERIALIZABLE and fails on a concurrent revocation.
//     The lock is the database's, shared by every worker of every process.
//  2. One call. fn is invoked exactly once, synchronously, inside the
//     fence, with the committed record (nil when there is none) and the
//     authority; it does no I/O. A store never re-runs fn, for instance
//     after a serialization failure: it rolls back and returns an error of
//     code CodeCheckpointWriteFailed instead.
//  3. Atomic outcome. fn's error rolls everything back and is returned
//     (errors.Is holds). A Change with a nil Next writes nothing at all: no
//     row, no revision, no updated_at (a read-only result has no workflow
//     effect). Otherwise Next and, when set, its Transition (an outbox row
//     the workflow consumes) are written in the same commit, after checking
//     that Next.Key is key and Next.Revision is the stored revision plus one
//     (1 for a new card): a revision column, compared on update
//     (UPDATE ... WHERE revision = $old) as a second guard. Every change of
//     metadata (spec, schema) advances the revision; a host that edits a
//     card outside this package must do the same.
//  4. Honest errors. CodeCheckpointWriteFailed only when nothing was
//     committed; any other error (a lost COMMIT acknowledgement, a context
//     cancelled during commit, a network error) means "unknown", and the
//     Resolver then reads once.
//
// Read(ctx, key, caller) returns committed state only, with the caller's
// current authority, and writes nothing. Both methods must be safe for
// concurrent use. interactionstest.TestStore checks all of this against an
// implementation with a real database.
//
// # Why a read and an update, or a lock in one process, is not a Store
//
// Take a card pending at revision 4, and two workers, W1 and W2 (two
// processes behind a load balancer), each holding one answer: "a" from a
// double-clicked button on a phone, "b" from the laptop.
//
//	W1: SELECT card          → pending, revision 4
//	W2: SELECT card          → pending, revision 4
//	W1: fn → answered "a", revision 5, transition T1
//	W2: fn → answered "b", revision 5, transition T2
//	W1: UPDATE card SET ... ; INSERT T1   → commits
//	W2: UPDATE card SET ... ; INSERT T2   → commits, overwriting "a"
//
// Both workers told their person "answer recorded"; the workflow received
// two transitions and resumed the turn twice, once with each answer; the
// record says "b" while the turn may already have acted on "a". A mutex in
// W1's process changes nothing: W2 never sees it. The same holds for
// authority: a check made before the transaction (or in a statement that
// does not hold the authorization rows) lets an answer from a caller whose
// access was revoked a millisecond earlier commit. With the fence, W2's
// SELECT ... FOR UPDATE waits for W1's commit, then reads revision 5,
// answered, and fn refuses with ErrAlreadyAnswered: one answer, one
// transition.
//
// # Lost acknowledgements
//
// When Transact returns an error other than CodeCheckpointWriteFailed after
// fn produced a change, the write may or may not have committed. The
// Resolver then reads exactly once: if the stored record holds this call's
// change (for an answer: the same submission id, action and digest), it is
// returned with Result.Reconciled set; otherwise the call fails with
// ErrNeedsReconciliation, also when the card is still pending, because a
// commit in flight may still land, and when the caller's authority was
// revoked before that read (the answer may have committed; a revoked
// caller is not told which). It never writes again, so a loser never
// advances a card another call closed. The client may repeat the request
// with the same submission id: a stored submission then comes back as
// ErrDuplicateAnswer with the stored record.
//
// # Time
//
// The clock is Options.Clock (time.Now by default). A card created at
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
// refused), limited in size (Options.MaxValueBytes), canonicalised, and the
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
