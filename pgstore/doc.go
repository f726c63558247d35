// Package pgstore is the reference PostgreSQL adapter of the chat protocol's
// two reliability components: a [recovery.Store] and [recovery.Admitter] for
// TurnRecovery, and an [interactions.Store] for the InteractionResolver
// (docs/contract.md section 13). Any number of workers, in any number of
// processes on any number of machines, coordinate through one PostgreSQL
// primary. It lives in a module of its own so that the core module never
// carries a database driver; it uses github.com/jackc/pgx/v5 and exposes pgx
// types (a [*pgxpool.Pool], a [pgx.Tx]) where a host must hand them over.
//
// Use it as it is, or copy it into a host's own store: the fences below are
// the part that must not be weakened. Its tests prove them against a real
// server (see "Evidence").
//
// # Schema and migrations
//
// Migrate(ctx, pool) applies the embedded, versioned migrations
// (migrations/NNNN_name.sql, recorded in pgstore_schema_migrations) in one
// transaction, serialized across processes by an advisory lock, and refuses
// a database whose schema is newer than the package ([ErrSchemaTooNew]). The
// tables: pgstore_turns (conversation_id, turn_id, status) and
// pgstore_effects (…, effect_id, position, revision, state, holder,
// lease_until, result, reconciled), one row per effect so that effects of
// one turn advance concurrently; pgstore_cards, one row per card with the
// record's members as columns (times in epoch milliseconds, the answer's
// digest stored verbatim), and pgstore_card_transitions, the workflow
// outbox.
//
// # The recovery fences
//
// Every write of an effect is a compare-and-swap on its revision, one
// autocommit statement (claim, completion, needs-reconciliation mark,
// reconciliation):
//
//	UPDATE pgstore_effects SET revision = $new, state = …, holder = …, lease_until = …, result = …, reconciled = …
//	WHERE conversation_id = $1 AND turn_id = $2 AND effect_id = $3 AND revision = $expected
//
// Zero rows is [refusal.ErrClaimConflict] ([refusal.ErrTurnNotRunning] when
// the turn is missing, read in the same statement). Under Read Committed a
// second writer of the same row waits for the first one's row lock, then
// re-evaluates its WHERE clause against the committed row (PostgreSQL's
// EvalPlanQual): the revision has moved, so it updates nothing. Exactly one
// swap from a revision wins.
//
// The admission fence is a session-level advisory lock on the turn,
// pg_advisory_lock([TurnLockKey](turn)), held on a dedicated connection by
// AdmitDispatch and by EndTurn:
//
//	AdmitDispatch:  SELECT pg_advisory_lock(k)                      -- its own statement
//	                adm.Authorize(ctx)                               -- ConnFromContext(ctx) is that connection
//	                UPDATE pgstore_effects SET revision = revision + 1, state = 'admitted'
//	                WHERE … AND revision = $rev AND state = 'claimed' AND holder = $holder
//	                  AND EXISTS (SELECT 1 FROM pgstore_turns WHERE … AND status = 'running')
//	                  RETURNING 1                                    -- no row: the turn's status tells why
//	                launch(ctx)                                      -- only after that COMMIT was acknowledged
//	                SELECT pg_advisory_unlock(k)
//	EndTurn:        SELECT pg_advisory_lock(k)
//	                WITH eff AS MATERIALIZED (SELECT … FROM pgstore_effects WHERE … FOR SHARE)
//	                UPDATE pgstore_turns SET status = $end WHERE … AND status = 'running'
//	                  RETURNING …, joined with eff                   -- the record as of this commit
//	                SELECT pg_advisory_unlock(k)
//
// A transaction-scoped lock cannot be the fence: the admission mark must be
// committed before launch, and the fence held until launch returns, after
// that commit. With the session lock, an EndTurn that starts while an
// admission is in progress waits for the unlock, so it commits after the
// launch and its record shows the effect admitted: the abort hook reaches
// it. An admission that starts after an EndTurn waits for it, and its
// UPDATE then finds the turn not running. The lock is taken in a statement
// of its own, before the statement that reads: every statement of the
// fence takes its snapshot after the lock was granted, at every isolation
// level (in a transaction at Repeatable Read or Serializable, the snapshot
// is taken by the first statement, which would precede the wait). The
// admission mark and the turn end are single statements, their own
// transactions. The turn end reads the effects FOR SHARE because
// compare-and-swap writes do not take the fence: a plain read would see them
// as of the statement's snapshot, so a swap committed between that snapshot
// and the end's commit would be missing from a record that claims to follow
// it; the row lock returns the newest version and holds later swaps until
// the commit; CreateTurn is one statement inserting the turn and its
// effects (ON CONFLICT DO NOTHING: an existing turn is
// [refusal.ErrClaimConflict]) and LoadTurn one SELECT, one snapshot.
//
// # The normal path in three round trips
//
// [RecoveryStore] is also a [recovery.Dispatcher], which TurnRecovery.Execute
// uses: on the normal path (the effect not yet claimed, the launch
// succeeds) an effect costs three statements, each one round trip and one
// write transaction, the floor of this design:
//
//	ClaimEffect:    UPDATE pgstore_effects SET revision = revision + 1, state = 'claimed', holder = …, lease_until = …
//	                WHERE … AND (state = 'pending' OR (state = 'claimed' AND lease_until <= $now))
//	                  AND EXISTS (SELECT 1 FROM pgstore_turns WHERE … AND status = 'running')
//	                RETURNING revision, pg_try_advisory_lock(k)          -- the claim with its read, and the fence
//	adm.Authorize(ctx)                                                    -- under the fence
//	                UPDATE … SET state = 'admitted' … (as AdmitDispatch)  -- the admission mark
//	launch(ctx)
//	Complete:       UPDATE pgstore_effects SET … WHERE … AND revision = $expected
//	                RETURNING pg_advisory_unlock(k)                       -- the completion and the release
//
// The claim only tries the lock: it holds the effect's row lock until it
// commits, and an EndTurn holding the fence waits for that row lock, so
// waiting there could deadlock. When the try fails (an EndTurn or an
// admission of the same turn holds the fence), a fourth round trip waits
// for it with pg_advisory_lock. Either way the lock is granted before the
// admission mark's statement starts, so that statement takes its snapshot
// after it. The completion releases the fence: the launch has returned, and
// a completion needs no fence. A cancellation must not wait for the
// execution, so when the execution outlasts [Options.FenceLinger] (2 ms)
// after launch, the fence is released on its own and the completion is the
// plain compare-and-swap. Off the normal path (nothing claimed, a lost
// swap) a read tells why. A statement that may have taken the lock and then
// failed ends its session, since a session-level lock outlives the
// rollback. BenchmarkTurnRecovery counts the statements with a pgx tracer
// and the round trips on the wire with a loopback proxy, and measures the
// effects per second against a bare INSERT interleaved in the same run.
//
// A host that wants revocation fenced against admission as well takes the
// same lock in its revoking transaction ([LockTurn]) for the caller's running
// turns; otherwise a revocation that commits after Authorize returned is
// ordered after the admission. The host's Authorizer may read its tables on
// the fence's connection ([ConnFromContext]).
//
// If the fence's connection dies while launch runs, the server ends the
// session and drops the lock, and a cancellation may commit before launch
// returns. The admission had committed, so the cancellation lists the
// effect in flight and the abort hook is called, possibly before the host's
// Launch returned: the host's abort must also stop executions that register
// after it ([recovery.Aborter] says so). A session whose client vanished
// without closing its socket keeps the lock until the server notices: set
// tcp_keepalives_idle (or client_connection_check_interval) on the server
// so that an EndTurn does not wait for a dead worker longer than you want.
//
// # Cancellation across instances
//
// EndTurn of a cancellation also sends pg_notify([AbortChannel], [conversation,
// turn]) in its statement; the server delivers it when that statement
// commits, never before, and never when it rolls back. [AbortListener], one
// per process on a connection of its own (LISTEN needs the session: connect
// it directly or through a pooler in session mode, never a transaction
// pooler), aborts the executions of that turn this process launched
// ([AbortListener.Launcher], Watch) through the host's Aborter. After each
// (re)connection, once LISTEN is in place, it reads every watched turn and
// aborts those whose committed status is cancelled, so a notification
// missed while the connection was down still aborts. Nothing of a turn
// launches after its cancellation committed (the fence), and no abort runs
// before it. TestCrossInstanceCancel runs the tool and the cancellation in
// two processes against a real server, with the listener's connection cut
// and with the canceller killed with SIGKILL, and logs the abort latency.
//
// # The interactions fence
//
// Transact runs one transaction at the store's isolation level:
//
//	BEGIN ISOLATION LEVEL …
//	SELECT … FROM pgstore_cards WHERE conversation_id = $1 AND correlation_id = $2 FOR UPDATE
//	-- AuthorityFunc: the host's authorization rows, SELECT … FOR SHARE
//	-- fn(current) — exactly once, synchronously, inside the fence
//	INSERT INTO pgstore_cards …                                  -- a new card, revision 1
//	  or UPDATE pgstore_cards SET … WHERE … AND revision = $stored  -- must update one row
//	INSERT INTO pgstore_card_transitions …                       -- the outbox, same commit
//	COMMIT
//
// The card's row lock is held from the read to the commit, across the
// authority, scope, revision, schema, expiry and cancellation checks that fn
// makes: a second worker's SELECT … FOR UPDATE waits, then (Read Committed)
// reads the committed row and refuses. The host's authorization rows are
// held FOR SHARE, so a revocation waits for the commit. A nil Next writes
// nothing (rollback); a change for another key, with a revision that is not
// the stored one plus one, or with a transition that does not match a
// terminal record, is refused with code checkpoint-write-failed. Two Open
// calls racing on a missing card both find no row to lock; the second
// INSERT fails on the primary key and its Transact returns
// checkpoint-write-failed (nothing committed). Read is a plain SELECT and
// the [AuthorityFunc] in a short transaction that writes nothing.
//
// # Read Committed and Serializable
//
// [Options.Isolation] selects the level of the store's explicit transactions
// (interactions); the autocommit statements run at the session's
// default_transaction_isolation. The fences hold at both levels, for the
// reasons above; what changes under Serializable is that the server may
// roll a transaction back with SQLSTATE 40001 (serialization_failure)
// where Read Committed would have waited and re-read. The store retries
// such a failure, and a 40P01 deadlock, inside the adapter, up to
// [Options.Retries] times: a recovery statement is run again as it is (the
// retry re-reads the revision and refuses if it moved); an interactions
// transaction is retried only while fn has not run. Once fn ran, a 40001
// rolls back and Transact returns checkpoint-write-failed, because fn is
// never run twice; the Resolver reports that, and the client repeats the
// request. A component never sees a 40001. Serializable alone does not
// fence a revocation in real time (a revocation that committed first may be
// ordered after the answer), which is why the [AuthorityFunc] locks FOR SHARE
// at both levels. Repeatable Read is refused by the constructors: it has
// Serializable's snapshot without its conflict detection.
//
// # Primary only
//
// Every read and write must go to the primary. A replica lags and serves
// no row locks, no advisory locks and no serializable conflict detection:
// a LoadTurn or Read on a replica may return a record older than one the
// caller already saw committed, and a fence taken there fences nothing.
// Point the pool at the primary (target_session_attrs=read-write), and do
// not route the store through a pooler in transaction mode (PgBouncer's
// transaction pooling): session advisory locks need the session.
//
// # Pool size
//
// Any pgxpool size works, pgx's default max(4, NumCPU) included: no call
// of the store waits for a second connection while it holds one, and a
// fence keeps its connection only while it holds the lock (from the claim
// through launch, plus at most FenceLinger); executions in flight hold
// none. Size the pool for the claims, admissions and turn ends running at
// once; the [AbortListener] connects outside it. The host's Authorizer and
// Launcher run under the fence (docs/contract.md section 13.1, rule 4):
// the Authorizer reads on [ConnFromContext], never on the pool, and Launch
// returns without waiting for a connection.
//
// # Lost acknowledgements
//
// A write's error tells how it ended. Known not committed, code
// checkpoint-write-failed: the write was never sent (ctx had ended or the
// connection was closed, checked right before sending), the server
// reported an ERROR for it, or COMMIT answered ROLLBACK. Anything else
// after the write was sent (a broken connection, a context that ended while
// waiting, a FATAL report) may have committed: code needs-reconciliation,
// and the components read once. [pgconn.SafeToRetry] is not trusted for that
// decision: pgx v5.12 reports a COMMIT whose answer was lost as "conn
// closed", which SafeToRetry accepts.
//
// # Evidence
//
// The tests run against a real server (.ci/postgres; CHATPROTOCOL_PG_DSN),
// each run in a fresh database: recoverytest.TestStore and
// interactionstest.TestStore at both isolation levels, with recoverytest's
// failpoints injected before the write and, after it, by a proxy that cuts
// the connection once the server committed (internal/lossyproxy);
// concurrency races (cancel racing admission, duplicate workers, racing
// answers; -pgstore.iterations, -pgstore.goroutines); lost acknowledgements
// on the wire (-pgstore.lostacks); worker processes killed with SIGKILL at
// every named failpoint and at random moments (-pgstore.kills); and
// BenchmarkTurnRecovery against BenchmarkBaselineInsert.
//
// # Security considerations
//
// Every statement is parameterized; the lock key is an integer. Results,
// answer values and workflow transitions are stored byte for byte (bytea,
// migration 3: jsonb rewrote 1e400 and -0) and never interpreted; ids and
// values no store can hold (NUL, invalid UTF-8, U+0000 in a JSON string)
// are refused with code invalid-input by recovery and interactions before
// they reach the store. Authority comes from the host's Authorizer or [AuthorityFunc],
// read under the fence; nothing stored in these tables grants any.
package pgstore
