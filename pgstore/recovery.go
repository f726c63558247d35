package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// RecoveryStore is the [recovery.Store] and [recovery.Admitter] of a host over
// PostgreSQL (package recovery; docs/contract.md section 13.1): turn
// and effect records in the tables pgstore_turns and pgstore_effects (see
// Migrate), compare-and-swap on each effect's revision, and an admission
// fence, shared with EndTurn, that is a session-level advisory lock on the
// turn (docs/contract.md section 13.4).
//
// All its methods are safe for concurrent use, by any number of goroutines
// and processes sharing the database, on the primary only. It keeps no
// state besides its pool and settings.
type RecoveryStore struct {
	pool *pgxpool.Pool
	set  settings
	// faults, when set, runs before each write is sent (tests inject
	// failures there); nil in production.
	faults func(ctx context.Context, w write) error
}

var (
	_ recovery.Store    = (*RecoveryStore)(nil)
	_ recovery.Admitter = (*RecoveryStore)(nil)
)

// write names a durable write of the RecoveryStore for the faults hook.
type write struct {
	op   string                 // "create", "cas", "admit", "end", and "load" (a read)
	next *recovery.EffectRecord // for "cas"
	end  recovery.TurnStatus    // for "end"
}

// NewRecoveryStore returns a [RecoveryStore] over pool, whose database must
// have been migrated (Migrate). opts may be nil. It returns an error for a
// nil pool or invalid options.
func NewRecoveryStore(pool *pgxpool.Pool, opts *Options) (*RecoveryStore, error) {
	if pool == nil {
		return nil, errors.New("pgstore: nil pool")
	}
	set, err := newSettings(opts)
	if err != nil {
		return nil, err
	}
	return &RecoveryStore{pool: pool, set: set}, nil
}

func (s *RecoveryStore) fault(ctx context.Context, w write) error {
	if s.faults == nil {
		return nil
	}
	return s.faults(ctx, w)
}

// autocommit runs one write statement, its own transaction, on a
// connection of its own, retrying serialization failures; an error before
// the statement was sent is checkpoint-write-failed (see sendable).
func (s *RecoveryStore) autocommit(ctx context.Context, run func(conn *pgx.Conn) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return writeFailed("no connection", err)
	}
	defer conn.Release()
	return s.set.retry(ctx, func() error {
		if err := sendable(ctx, conn.Conn()); err != nil {
			return err
		}
		return run(conn.Conn())
	})
}

const sqlCreateTurn = `
WITH t AS (
	INSERT INTO pgstore_turns (conversation_id, turn_id, status) VALUES ($1, $2, 'running')
	ON CONFLICT DO NOTHING
	RETURNING conversation_id, turn_id
), e AS (
	INSERT INTO pgstore_effects (conversation_id, turn_id, effect_id, position, revision, state)
	SELECT t.conversation_id, t.turn_id, x.id, x.ord, 1, 'pending'
	FROM t, unnest($3::text[]) WITH ORDINALITY AS x(id, ord)
	RETURNING 1
)
SELECT count(*) FROM t`

// CreateTurn implements [recovery.Store]: one autocommit statement inserts
// the turn and its effects, or nothing when the turn exists
// ([refusal.ErrClaimConflict]). rec must be a running turn whose effects are
// pending at revision 1 with distinct ids (else [refusal.ErrInvalidTurn]).
func (s *RecoveryStore) CreateTurn(ctx context.Context, rec recovery.TurnRecord) error {
	if err := rec.Turn.Validate(); err != nil {
		return err
	}
	ids := make([]string, len(rec.Effects))
	seen := make(map[string]bool, len(rec.Effects))
	for i, e := range rec.Effects {
		if e.State != recovery.EffectPending || e.Revision != 1 || seen[e.ID] ||
			(recovery.EffectRef{Turn: rec.Turn, Effect: e.ID}).Validate() != nil {
			return refused(refusal.CodeInvalidTurn, "a new turn's effects are distinct, pending, at revision 1")
		}
		seen[e.ID] = true
		ids[i] = e.ID
	}
	if rec.Status != recovery.TurnRunning {
		return refused(refusal.CodeInvalidTurn, "a new turn is running")
	}
	if err := s.fault(ctx, write{op: "create"}); err != nil {
		return err
	}
	var created int
	err := s.autocommit(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, sqlCreateTurn, rec.Turn.Conversation, rec.Turn.Turn, ids).Scan(&created)
	})
	if err := commitOutcome("turn start", err); err != nil {
		return err
	}
	if created == 0 {
		return refused(refusal.CodeClaimConflict, "the turn exists")
	}
	return nil
}

const sqlLoadTurn = `
SELECT t.status, e.effect_id, e.revision, e.state, e.holder, e.lease_until, e.result, e.reconciled
FROM pgstore_turns t
LEFT JOIN pgstore_effects e ON e.conversation_id = t.conversation_id AND e.turn_id = t.turn_id
WHERE t.conversation_id = $1 AND t.turn_id = $2
ORDER BY e.position`

// LoadTurn implements [recovery.Store]: one statement, so one snapshot, reads
// the turn and its effects in the order they were authorized. A missing
// turn is [refusal.ErrTurnNotRunning]; any other error is the database's.
func (s *RecoveryStore) LoadTurn(ctx context.Context, turn recovery.TurnRef) (recovery.TurnRecord, error) {
	if err := s.fault(ctx, write{op: "load"}); err != nil {
		return recovery.TurnRecord{}, err
	}
	var rec recovery.TurnRecord
	err := s.set.retry(ctx, func() error {
		var err error
		rec, err = loadTurn(ctx, s.pool, turn)
		return err
	})
	return rec, err
}

// querier is what loadTurn needs of a pool or connection.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

func loadTurn(ctx context.Context, q querier, turn recovery.TurnRef) (recovery.TurnRecord, error) {
	rows, err := q.Query(ctx, sqlLoadTurn, turn.Conversation, turn.Turn)
	if err != nil {
		return recovery.TurnRecord{}, err
	}
	rec, err := scanTurn(rows, turn)
	if err != nil {
		return recovery.TurnRecord{}, err
	}
	if rec.Status == "" {
		return recovery.TurnRecord{}, refused(refusal.CodeTurnNotRunning, "no such turn")
	}
	return rec, nil
}

// scanTurn reads the rows of sqlLoadTurn (or of EndTurn's statement, which
// has the same columns).
func scanTurn(rows pgx.Rows, turn recovery.TurnRef) (recovery.TurnRecord, error) {
	defer rows.Close()
	rec := recovery.TurnRecord{Turn: turn}
	for rows.Next() {
		var (
			status     string
			id, state  *string
			holder     *string
			revision   *int64
			lease      *time.Time
			result     []byte
			reconciled *bool
		)
		if err := rows.Scan(&status, &id, &revision, &state, &holder, &lease, &result, &reconciled); err != nil {
			return recovery.TurnRecord{}, err
		}
		rec.Status = recovery.TurnStatus(status)
		if id == nil {
			continue // a turn without effects
		}
		e := recovery.EffectRecord{ID: *id, Revision: uint64(*revision), State: recovery.EffectState(*state), Holder: *holder, Reconciled: *reconciled}
		if lease != nil {
			e.LeaseUntil = *lease
		}
		if len(result) > 0 {
			e.Result.Data = result
		}
		rec.Effects = append(rec.Effects, e)
	}
	return rec, rows.Err()
}

const sqlCompareAndSwap = `
WITH upd AS (
	UPDATE pgstore_effects
	SET revision = $5, state = $6, holder = $7, lease_until = $8, result = $9, reconciled = $10
	WHERE conversation_id = $1 AND turn_id = $2 AND effect_id = $3 AND revision = $4
	RETURNING 1
)
SELECT (SELECT count(*) FROM upd),
       EXISTS (SELECT 1 FROM pgstore_turns WHERE conversation_id = $1 AND turn_id = $2)`

// CompareAndSwapEffect implements [recovery.Store]: one autocommit UPDATE ...
// WHERE revision = expected. Zero rows is [refusal.ErrClaimConflict], or
// [refusal.ErrTurnNotRunning] when the turn does not exist; next.Revision
// other than expected+1 is [refusal.ErrInvalidTurn]. A write known not to
// have committed is [refusal.ErrCheckpointWriteFailed]; one whose
// acknowledgement was lost is [refusal.ErrNeedsReconciliation].
func (s *RecoveryStore) CompareAndSwapEffect(ctx context.Context, turn recovery.TurnRef, expected uint64, next recovery.EffectRecord) error {
	if next.Revision != expected+1 {
		return refused(refusal.CodeInvalidTurn, "the next revision must be the expected one plus one")
	}
	if err := s.fault(ctx, write{op: "cas", next: &next}); err != nil {
		return err
	}
	lease, result := effectColumns(next)
	var (
		swapped    int
		turnExists bool
	)
	err := s.autocommit(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, sqlCompareAndSwap, turn.Conversation, turn.Turn, next.ID, int64(expected),
			int64(next.Revision), string(next.State), next.Holder, lease, result, next.Reconciled).Scan(&swapped, &turnExists)
	})
	return swapOutcome(err, swapped, turnExists)
}

// effectColumns is next's nullable columns as a compare-and-swap writes
// them: the lease truncated to the column's microseconds, NULL when it is
// zero, and the result's bytes, NULL when there are none.
func effectColumns(next recovery.EffectRecord) (lease *time.Time, result []byte) {
	if !next.LeaseUntil.IsZero() {
		l := next.LeaseUntil.Truncate(time.Microsecond)
		lease = &l
	}
	if len(next.Result.Data) > 0 {
		result = next.Result.Data
	}
	return lease, result
}

// swapOutcome is the answer of a compare-and-swap from the statement's
// error and its row: swapped rows and whether the turn exists.
func swapOutcome(err error, swapped int, turnExists bool) error {
	if err := commitOutcome("effect write", err); err != nil {
		return err
	}
	switch {
	case swapped == 1:
		return nil
	case !turnExists:
		return refused(refusal.CodeTurnNotRunning, "no such turn")
	}
	return refused(refusal.CodeClaimConflict, "the effect's revision moved, or the turn has no such effect")
}

// sqlEndTurn ends a running turn and returns its effects as they stand at
// its commit. The effects are read FOR SHARE: under Read Committed a plain
// join would read them from the statement's snapshot, and a
// compare-and-swap committed between that snapshot and this statement's
// commit (CAS writes do not take the fence) would be missing from the
// returned record although it precedes the turn's end - a history that is
// not linearizable (recoverytest's "linearizable" check caught it, about
// one run in fifteen). A row lock returns the newest committed version and
// holds later writers until the commit. MATERIALIZED keeps the locking
// CTE from being folded into the join.
const sqlEndTurn = sqlEndTurnHead + `
	RETURNING status` + sqlEndTurnTail

// sqlCancelTurn is sqlEndTurn for a cancellation: the same statement, and
// a notification on AbortChannel whose payload ($4) names the turn. The
// server delivers it when the statement's transaction commits, never
// before, and never if it rolls back (AbortListener).
const sqlCancelTurn = sqlEndTurnHead + `
	RETURNING status, pg_notify('` + AbortChannel + `', $4)` + sqlEndTurnTail

const sqlEndTurnHead = `
WITH eff AS MATERIALIZED (
	SELECT effect_id, revision, state, holder, lease_until, result, reconciled, position
	FROM pgstore_effects
	WHERE conversation_id = $1 AND turn_id = $2
	FOR SHARE
), upd AS (
	UPDATE pgstore_turns SET status = $3, ended_at = now()
	WHERE conversation_id = $1 AND turn_id = $2 AND status = 'running'`

const sqlEndTurnTail = `
)
SELECT u.status, e.effect_id, e.revision, e.state, e.holder, e.lease_until, e.result, e.reconciled
FROM upd u
LEFT JOIN eff e ON true
ORDER BY e.position`

// EndTurn implements [recovery.Store]: holding the turn's fence (the advisory
// lock AdmitDispatch holds through launch), one autocommit statement moves
// the running turn to status and returns it with its effects as they stand
// at that commit (read FOR SHARE, see sqlEndTurn). A turn that is missing or not running is
// [refusal.ErrTurnNotRunning]; a status that is not terminal is
// [refusal.ErrInvalidTurn].
func (s *RecoveryStore) EndTurn(ctx context.Context, turn recovery.TurnRef, status recovery.TurnStatus) (recovery.TurnRecord, error) {
	if !status.Terminal() {
		return recovery.TurnRecord{}, refused(refusal.CodeInvalidTurn, "the end status must be terminal")
	}
	f, err := s.set.lockFence(ctx, s.pool, TurnLockKey(turn))
	if err != nil {
		return recovery.TurnRecord{}, err
	}
	defer s.set.unlock(ctx, f)
	if err := s.fault(ctx, write{op: "end", end: status}); err != nil {
		return recovery.TurnRecord{}, err
	}
	var rec recovery.TurnRecord
	err = s.set.retry(ctx, func() error {
		if err := sendable(ctx, f.conn.Conn()); err != nil {
			return err
		}
		var rows pgx.Rows
		var err error
		if status == recovery.TurnCancelled {
			rows, err = f.conn.Query(ctx, sqlCancelTurn, turn.Conversation, turn.Turn, string(status), abortPayload(turn))
		} else {
			rows, err = f.conn.Query(ctx, sqlEndTurn, turn.Conversation, turn.Turn, string(status))
		}
		if err != nil {
			return err
		}
		rec, err = scanTurn(rows, turn)
		return err
	})
	if err := commitOutcome("turn end", err); err != nil {
		return recovery.TurnRecord{}, err
	}
	if rec.Status == "" {
		return recovery.TurnRecord{}, refused(refusal.CodeTurnNotRunning, "the turn is missing or not running")
	}
	return rec, nil
}

// sqlAdmit writes the admission mark: one row when the turn is running and
// the effect is claimed by the holder at the revision; no row otherwise,
// and then sqlTurnStatus tells a turn that is not running from a claim
// that moved (off the normal path).
const sqlAdmit = `
UPDATE pgstore_effects e
SET revision = e.revision + 1, state = 'admitted'
WHERE e.conversation_id = $1 AND e.turn_id = $2 AND e.effect_id = $3
  AND e.revision = $4 AND e.state = 'claimed' AND e.holder = $5
  AND EXISTS (SELECT 1 FROM pgstore_turns t
              WHERE t.conversation_id = $1 AND t.turn_id = $2 AND t.status = 'running')
RETURNING 1`

const sqlTurnStatus = `SELECT status FROM pgstore_turns WHERE conversation_id = $1 AND turn_id = $2`

// AdmitDispatch implements [recovery.Admitter]. Holding the turn's fence (a
// session-level advisory lock on a dedicated connection, the one EndTurn
// takes), it calls adm.Authorize with a ctx from which [ConnFromContext]
// returns that connection, then one autocommit UPDATE checks that the turn
// is running and the effect is claimed by adm.Holder at adm.Revision and
// marks it admitted at adm.Revision+1; only once that commit is
// acknowledged does it call launch, still holding the fence, and then it
// releases the fence and returns launch's error.
//
// Errors: adm.Authorize's own; [refusal.ErrTurnNotRunning];
// [refusal.ErrClaimConflict]; [refusal.ErrCheckpointWriteFailed] (the mark
// was not committed); [refusal.ErrNeedsReconciliation] (the mark's
// acknowledgement was lost). In all of these launch is not called.
func (s *RecoveryStore) AdmitDispatch(ctx context.Context, adm recovery.Admission, launch recovery.DispatchFunc) error {
	f, err := s.set.lockFence(ctx, s.pool, TurnLockKey(adm.Effect.Turn))
	if err != nil {
		return err
	}
	defer s.set.unlock(ctx, f)
	return s.admitHeld(ctx, f.conn, adm, launch)
}

// admitHeld is AdmitDispatch once the fence is held on conn: Authorize,
// the admission mark, launch.
func (s *RecoveryStore) admitHeld(ctx context.Context, conn *pgxpool.Conn, adm recovery.Admission, launch recovery.DispatchFunc) error {
	if adm.Authorize == nil {
		return refused(refusal.CodeUnauthorized, "no authority check")
	}
	turn := adm.Effect.Turn
	if err := adm.Authorize(context.WithValue(ctx, connKey{}, conn.Conn())); err != nil {
		return err
	}
	if err := s.fault(ctx, write{op: "admit"}); err != nil {
		return err
	}
	var marked int
	err := s.set.retry(ctx, func() error {
		if err := sendable(ctx, conn.Conn()); err != nil {
			return err
		}
		return conn.QueryRow(ctx, sqlAdmit, turn.Conversation, turn.Turn, adm.Effect.Effect,
			int64(adm.Revision), adm.Holder).Scan(&marked)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		// Nothing written: tell why. The read runs under the fence, after
		// the UPDATE, so a turn it finds running was running then.
		var status string
		err := conn.QueryRow(ctx, sqlTurnStatus, turn.Conversation, turn.Turn).Scan(&status)
		switch {
		case errors.Is(err, pgx.ErrNoRows), err == nil && status != string(recovery.TurnRunning):
			return refused(refusal.CodeTurnNotRunning, "the turn is missing or not running")
		case err != nil:
			return writeFailed("admission mark not written; reading why failed", err)
		}
		return refused(refusal.CodeClaimConflict, "the claim moved")
	}
	if err := commitOutcome("admission mark", err); err != nil {
		return err
	}
	return launch(ctx)
}
