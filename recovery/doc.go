// Package recovery is TurnRecovery: the component a backend wraps around its
// existing session store so that a worker crash, a lost acknowledgement, a
// reconnect or a model retry never runs a side-effecting tool twice, and a
// cancelled turn never launches anything new (docs/contract.md sections 11
// and 13.1).
//
// Durable-execution engines run effects at least once. TurnRecovery launches
// each effect at most once and says so when it cannot know an outcome: the
// host then reconciles through its own idempotency records. Use it for
// effects that must not repeat (a payment, an email, a booking); a pure
// lookup needs none of this.
//
// The package imports only the standard library and the module's leaf error
// package: no validator, no database. Hosts supply the storage.
//
// # The flow
//
//	rec := recovery.New(recovery.Host{Store: s, Authorizer: a, Aborter: ab}, nil)
//	rec.Start(ctx, caller, turn, []string{"call-1", "call-2"}) // host-authorized effect ids
//	res, err := rec.Execute(ctx, caller, recovery.EffectRef{Turn: turn, Effect: "call-1"}, launcher)
//	rec.Cancel(ctx, caller, turn)                              // commits, then calls the abort hook
//	rec.Reconcile(ctx, caller, effect, lookup)                 // after needs-reconciliation
//
// Execute reads the effect; a completed effect returns its stored result.
// Otherwise it claims the effect (a compare-and-swap on the effect's
// revision), then calls the store's AdmitDispatch, which under the fence it
// shares with cancellation revalidates the caller, the running turn and the
// claim, durably marks the effect admitted and calls the launch callback
// exactly once; the callback asks the host's Launcher to start the
// execution. Execute awaits the execution outside the fence and stores the
// result with a compare-and-swap. The Launcher of a synchronous tool
// returns Go(dispatchCtx, tool), which runs the tool on its own goroutine
// under a context the host's abort hook cancels.
//
// A networked store may also implement Dispatcher: Execute then reads and
// claims in one call, and admits and completes through the fence that call
// hands out, so that the normal path costs three round trips (pgstore's
// does). A claim-conflict caused by another holder's live lease is a
// *LeaseError carrying when that lease ends: a restarted worker waits it
// out, then executes again or reconciles. Ids no store can hold (a NUL,
// invalid UTF-8) are refused with refusal.ErrInvalidInput before the store
// is asked.
//
// # Guarantees
//
// With a Store that meets the contract below, whatever crashes, lost
// acknowledgements, duplicate workers, paused holders and retries happen:
//
//   - an effect launches at most once, and only if the host authorized it
//     at Start;
//   - nothing launches once a cancellation (or Finish) has committed: the
//     abort hook runs only after the commit and can authorize nothing;
//   - every Result returned with a nil error equals the stored result;
//   - a completed effect record and an ended turn's status never change;
//     a result that arrives after cancellation is stored without reopening
//     the turn;
//   - an unknown outcome (a dispatch error, a lost acknowledgement, an
//     admitted effect without a result) returns ErrNeedsReconciliation and
//     never redispatches; Reconcile stores a host-verified result through
//     the same compare-and-swap, calling the host's lookup only once no
//     launch of the effect can be in progress (it passes the admission
//     fence first);
//   - a checkpoint write known to have failed returns
//     ErrCheckpointWriteFailed, never nothing.
//
// recoverytest proves these with a fake store that fails at 25 named
// failpoints, a seeded simulation of workers that crash and restart, a
// model-based test and linearizability checks; a host's own adapter proves
// its part with recoverytest.TestStore. Production restart durability still
// requires each host's persistent adapter tests (docs/contract.md section
// 13).
//
// # Implementing the Store
//
// Store, Admitter, Authorizer, Aborter and Launcher are
// consumer-side interfaces. Every method takes ctx first and must be safe
// for concurrent use, from many goroutines and many processes. The Store
// keeps, per turn, a status and, per effect, a record with its own revision,
// so that effects advance concurrently. What each method must guarantee:
//
//   - CreateTurn: insert the turn and its pending effects atomically, or
//     ErrClaimConflict if the turn exists.
//   - LoadTurn: one consistent snapshot of the turn and its effects;
//     ErrTurnNotRunning if there is none.
//   - CompareAndSwapEffect: write one effect record if its revision is still
//     the expected one, else ErrClaimConflict; independent of the turn
//     status and of the fence.
//   - EndTurn: under the fence, move a running turn to a terminal status
//     and return the committed record; ErrTurnNotRunning otherwise.
//   - AdmitDispatch (Admitter): under the same fence, call adm.Authorize,
//     check the running turn and the claim, commit the admission mark with
//     a compare-and-swap, then call launch once, then release the fence.
//     Launch only after the mark committed and was acknowledged. Take the
//     fence before any check: Reconcile relies on a refused AdmitDispatch
//     as a barrier behind a launch in progress.
//
// How a write ended is told by the error: nil (committed and acknowledged),
// ErrClaimConflict or ErrTurnNotRunning (refused, nothing written),
// ErrCheckpointWriteFailed (known not written), ErrNeedsReconciliation (may
// have been written: the acknowledgement was lost). Any other error counts
// as "may have been written". Never report a lost acknowledgement as
// success: that is how an effect runs twice.
//
// # A PostgreSQL adapter
//
// A turns table (conversation_id, turn_id, status) and an effects table
// (conversation_id, turn_id, effect_id, revision, state, holder,
// lease_until, result, reconciled) give at most three write transactions
// per effect on the normal path: claim, admission, completion (a dispatch
// error writes the needs-reconciliation mark instead of the completion).
//
//   - Claim, completion, mark and Reconcile are one statement each:
//     UPDATE effects SET revision=$new, state=..., holder=..., lease_until=...,
//     result=..., reconciled=... WHERE conversation_id=$1 AND turn_id=$2
//     AND effect_id=$3 AND revision=$expected. Zero rows is
//     ErrClaimConflict (or ErrTurnNotRunning when the turn is missing).
//   - The fence is a lock on the turn shared by AdmitDispatch and EndTurn.
//     Because the admission mark must be committed before launch and the
//     fence held until launch returns, a transaction-scoped row lock cannot
//     be the fence: use a session-level advisory lock on a dedicated
//     connection, pg_advisory_lock(key) where key hashes the turn, around
//     adm.Authorize, the admission transaction (UPDATE effects SET
//     state='admitted', revision=revision+1 ... WHERE ... AND revision=$rev
//     AND state='claimed' AND holder=$holder AND EXISTS (running turn);
//     COMMIT) and the launch call, then pg_advisory_unlock(key); return
//     the connection to the pool with the lock, and never wait for a
//     second connection while holding it (a pool the size of the
//     concurrent calls would deadlock). EndTurn
//     takes the same lock as a statement of its own before its transaction
//     reads anything (then UPDATE turns SET status=... WHERE ... AND
//     status='running' RETURNING, and read the effects FOR SHARE): under
//     Repeatable Read or Serializable the first statement of a transaction
//     fixes its snapshot, so a pg_advisory_xact_lock taken inside the
//     transaction would wait for the fence and then read data older than
//     the admission it waited for. The effects are read FOR SHARE because
//     claims and completions do not take the fence: a plain read under
//     Read Committed misses a swap committed between the read's snapshot
//     and the end's commit, and recoverytest's linearizable check fails.
//   - Tell failures apart by what was sent, not by the driver's retry
//     hints: an error before COMMIT was sent (checked on the connection
//     and the ctx right before sending it) is ErrCheckpointWriteFailed; an
//     error from COMMIT itself, a broken connection or an ended ctx during
//     it is ErrNeedsReconciliation. Do not trust pgconn.SafeToRetry here:
//     pgx v5.12 reports a COMMIT whose answer was lost as "conn closed",
//     which SafeToRetry accepts although the COMMIT may have committed
//     (pgstore's lost-acknowledgement proxy test found it).
//   - If the fence connection dies while launch runs, the server drops the
//     advisory lock and a cancellation may commit before launch returns.
//     The admission had committed, so the cancellation lists the effect as
//     in flight and the abort hook is called, possibly before the host's
//     Launch returned: the host's abort must also stop executions that
//     register after it (remember aborted turns).
//   - LeaseUntil is written truncated to microseconds, which timestamptz
//     keeps exactly; Result.Data is opaque bytes (bytea), nil equal to
//     empty.
//   - To fence revocation as well, have the host's revoke take the same
//     advisory lock; AdmitDispatch passes its ctx to adm.Authorize, so an
//     adapter may attach its connection for the host's authorizer.
//
// Run recoverytest.TestStore against the adapter, with Subject.Reopen
// opening a second pool and, where the adapter can inject faults,
// Subject.Arm.
//
// # Security considerations
//
// Authority is rechecked at every operation and again inside the admission
// fence, so a caller whose access was revoked after its claim launches
// nothing. Effect ids come from the host at Start, never from model output
// or a client: Execute of any other id is ErrUnknownEffect. A model retry,
// a reconnect, a delayed snapshot or the abort hook cannot cause a launch;
// only AdmitDispatch can, once per effect. The Authorizer fails closed: any
// error refuses. Results are opaque bytes stored and returned as given;
// they are never interpreted.
//
// A refusal's Code and Path are safe to send to a client; its Message and
// cause are not, since they wrap the store's own error text (a PostgreSQL
// message included): log them, never write err.Error() into a response.
package recovery
