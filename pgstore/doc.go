// Package pgstore holds the PostgreSQL stores of the chat protocol's
// reliability components and replay windows: [RecoveryStore], a
// [recovery.Store], [recovery.Admitter] and [recovery.Dispatcher];
// [InteractionStore], an [interactions.Store]; [ConversationStore], a
// conversation store (docs/contract.md section 20); and [Window], a
// [replay.Window] that every instance of a host shares. Any number of
// workers, in any number of processes, coordinate through one PostgreSQL
// primary. The package is a module of its own, so that the core module
// carries no database driver; it uses pgx v5 and takes pgx types (a
// [*pgxpool.Pool], a [pgx.Tx]) where a host hands them over.
//
// Each store follows a design of docs/contract.md: section 11.8 for the
// window, 13.4 for the recovery store and its admission fence, 13.6 for
// the answer store, and 13.7 for isolation, pools and the primary. A host
// that copies a store into its own keeps those fences as they are.
//
// # Schema
//
// [Migrate] brings a database to [LatestVersion], applying the embedded
// migrations ([Migrations]) in one transaction, serialized across
// processes, and refuses a newer schema with [ErrSchemaTooNew]. Its tables:
// pgstore_turns and pgstore_effects (one row per effect) for recovery;
// pgstore_cards and the outbox pgstore_card_transitions for interactions;
// pgstore_replay_turns and pgstore_replay_frames for windows; and
// pgstore_schema_migrations, the versions applied.
//
// # Recovery
//
// [NewRecoveryStore] returns the store. Its admission fence is the
// session-level advisory lock [TurnLockKey] names, taken by admission and
// turn end alike. A host fences revocation as well by taking it in its
// revoking transaction ([LockTurn]); its Authorizer reads on the fence's
// connection ([ConnFromContext]). [AbortListener], one per process, carries
// a committed cancellation to every process that runs an execution of the
// turn, through notifications on [AbortChannel].
//
// # Interactions
//
// [NewInteractionStore] returns the store. The host's [AuthorityFunc]
// reads the caller's authority inside the store's transaction and locks the
// rows it relies on.
//
// # Windows
//
// [NewWindow] returns a [Window] for [WindowOptions]: count and byte
// retention per turn, applied by [Window.Append]; age retention, applied by
// [Window.Trim], which every window runs periodically; a catch-up interval
// for waiting readers. Serve it with package stream's handler in place of
// [replay.NewMemory]; [Window.Capabilities] says what a host may declare.
//
// # Deployment
//
//   - The primary only: point the pool at it (target_session_attrs=read-write).
//   - No transaction pooler: the stores' advisory locks and the listeners'
//     LISTEN need a session; connect directly or through a pooler in
//     session mode.
//   - Any pool size works, one connection included. [AbortListener] and
//     each [Window] hold one connection of their own besides the pool.
//   - [Options.Isolation] is read committed (the default) or serializable;
//     the constructors refuse repeatable read.
//   - Set tcp_keepalives_idle (or client_connection_check_interval) on the
//     server, so that a turn end waits for a dead worker's fence no longer
//     than that.
//
// # Errors
//
// A write answers as docs/contract.md section 13.3 says: nil when
// committed; [refusal.ErrClaimConflict] or [refusal.ErrTurnNotRunning]
// when refused, nothing written; [refusal.ErrCheckpointWriteFailed] when
// known not committed; [refusal.ErrNeedsReconciliation] when its
// acknowledgement was lost. A serialization failure or a deadlock is
// retried inside the store ([Options.Retries]) and never reaches a
// component as such. Any other error is the database's.
//
// # Concurrency
//
// Every store, [Window] and [AbortListener] is safe for concurrent use by
// any number of goroutines and processes sharing the database. The stores
// keep no state besides their pool and settings: a fresh worker after a
// restart finds everything in the database.
//
// # Security considerations
//
// Every statement is parameterized; the lock key is an integer. Results,
// answer values, transitions and frames are stored byte for byte (bytea)
// and never interpreted; ids and values no store can hold are refused with
// [refusal.ErrInvalidInput] before they reach the database. Authority comes
// from the host's Authorizer or [AuthorityFunc], read under the fence;
// nothing stored in these tables grants any.
package pgstore
