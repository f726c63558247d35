package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

var _ recovery.Dispatcher = (*RecoveryStore)(nil)

// sqlClaimEffect claims the effect when it may be claimed and, only then,
// tries the turn's fence, in one autocommit statement. The UPDATE
// re-checks its WHERE clause against the newest committed row
// (EvalPlanQual), so of two racing claims exactly one is written. The lock
// is only tried (pg_try_advisory_lock never waits), and only for the row
// updated: a statement that holds the effect's row lock must not wait for
// the fence, which EndTurn holds while it waits for that row lock. No row
// means nothing was written; ClaimEffect then reads the turn (sqlLoadTurn)
// to tell why, off the normal path.
const sqlClaimEffect = `
UPDATE pgstore_effects e
SET revision = e.revision + 1, state = 'claimed', holder = $4, lease_until = $5, result = NULL, reconciled = false
WHERE e.conversation_id = $1 AND e.turn_id = $2 AND e.effect_id = $3
  AND (e.state = 'pending' OR (e.state = 'claimed' AND e.lease_until <= $6))
  AND EXISTS (SELECT 1 FROM pgstore_turns t WHERE t.conversation_id = $1 AND t.turn_id = $2 AND t.status = 'running')
RETURNING e.revision, pg_try_advisory_lock($7)`

// sqlUnlock releases the fence.
const sqlUnlock = `SELECT pg_advisory_unlock($1)`

// sqlFence takes the fence, waiting for it, in a statement of its own:
// what ClaimEffect sends when the try in sqlClaimEffect found it taken.
const sqlFence = `SELECT pg_advisory_lock($1)`

// sqlCompleteAndRelease is the compare-and-swap of sqlCompareAndSwap that
// also releases the fence, for the row it updated: the launch has
// returned, and the completion needs no fence. No row means nothing was
// written; Complete then releases the fence and asks sqlCompareAndSwap's
// question (does the turn exist) off the normal path.
const sqlCompleteAndRelease = `
UPDATE pgstore_effects
SET revision = $5, state = $6, holder = $7, lease_until = $8, result = $9, reconciled = $10
WHERE conversation_id = $1 AND turn_id = $2 AND effect_id = $3 AND revision = $4
RETURNING pg_advisory_unlock($11)`

// ClaimEffect implements [recovery.Dispatcher]: one autocommit statement, on
// a connection of its own, reads the turn and the effect, writes the claim
// when the effect may be claimed and, if it wrote it, tries the turn's
// fence, the advisory lock [TurnLockKey] names; a second statement waits for
// the fence when another session holds it (docs/contract.md section 13.4).
//
// The returned [recovery.DispatchFence] holds the connection and the lock:
// its AdmitDispatch authorizes, writes the admission mark and launches, all
// under the fence, as [RecoveryStore.AdmitDispatch] does; its Complete
// writes the completion and releases the fence in one statement; when the
// execution takes longer than [Options.FenceLinger] after launch, the fence
// is released on its own. The connection goes back to the pool with the
// lock. The normal path costs three round trips and three write
// transactions. Errors are those of [recovery.Dispatcher]; a claim written
// whose fence could not be taken is [refusal.ErrCheckpointWriteFailed]
// (nothing launches; the claim keeps other workers out until its lease
// ends).
func (s *RecoveryStore) ClaimEffect(ctx context.Context, c recovery.Claim) (recovery.ClaimResult, error) {
	turn := c.Effect.Turn
	claim := recovery.EffectRecord{ID: c.Effect.Effect, State: recovery.EffectClaimed, Holder: c.Holder,
		LeaseUntil: c.LeaseUntil.Truncate(time.Microsecond)}
	if err := s.fault(ctx, write{op: "cas", next: &claim}); err != nil {
		return recovery.ClaimResult{}, err
	}
	key := TurnLockKey(turn)
	var (
		conn        *pgxpool.Conn
		newRevision int64
		locked      bool
		err         error
	)
	// A retry runs on a new connection: the statement that failed may have
	// taken the lock (session-level, it outlives the rollback), and taking
	// it twice would hold it after the one release. Closing the session
	// releases it.
	for attempt := 0; ; attempt++ {
		if conn, err = s.pool.Acquire(ctx); err != nil {
			return recovery.ClaimResult{}, writeFailed("no connection", err)
		}
		if err = sendable(ctx, conn.Conn()); err == nil {
			err = conn.QueryRow(ctx, sqlClaimEffect, turn.Conversation, turn.Turn, c.Effect.Effect, c.Holder,
				claim.LeaseUntil, c.Now, key).Scan(&newRevision, &locked)
		}
		if !retryable(err) || attempt >= s.set.retries || ctx.Err() != nil {
			break
		}
		_ = conn.Conn().Close(context.WithoutCancel(ctx))
		conn.Release()
	}
	if errors.Is(err, pgx.ErrNoRows) {
		// Nothing written: the record says why (a result, a live lease, a
		// turn that ended, a race lost).
		conn.Release()
		rec, err := s.LoadTurn(ctx, turn)
		if err != nil && refusal.CodeOf(err) == "" {
			err = &refusal.Error{Code: refusal.CodeStoreUnavailable, Message: "pgstore: nothing claimed; reading why failed", Err: err}
		}
		if err != nil {
			return recovery.ClaimResult{}, err
		}
		eff, ok := rec.Effect(c.Effect.Effect)
		if !ok {
			return recovery.ClaimResult{}, refused(refusal.CodeUnknownEffect, "the turn has no such effect")
		}
		return recovery.ClaimResult{Status: rec.Status, Record: eff}, nil
	}
	if err != nil {
		// A lock tried in a statement whose answer was lost may be held:
		// end the session, which releases it.
		_ = conn.Conn().Close(context.WithoutCancel(ctx))
		conn.Release()
		return recovery.ClaimResult{}, commitOutcome("effect claim", err)
	}
	if !locked {
		if _, err := conn.Exec(ctx, sqlFence, key); err != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx)) // the lock may have been granted
			conn.Release()
			return recovery.ClaimResult{}, writeFailed("the claim was written but the fence could not be taken", err)
		}
	}
	claim.Revision = uint64(newRevision)
	return recovery.ClaimResult{Status: recovery.TurnRunning, Record: claim,
		Fence: &dispatchFence{s: s, conn: conn, key: key, turn: turn}}, nil
}

// dispatchFence is the recovery.DispatchFence ClaimEffect hands out: the
// turn's advisory lock, held on conn. The connection goes back to the pool
// as the lock is released (conn is then nil), so that no completion waits
// for it (docs/contract.md section 13.4, connections).
type dispatchFence struct {
	s    *RecoveryStore
	key  int64
	turn recovery.TurnRef

	mu     sync.Mutex
	conn   *pgxpool.Conn // the lock's session while it is held, else nil
	closed bool
	linger *time.Timer
}

var _ recovery.DispatchFence = (*dispatchFence)(nil)

// AdmitDispatch implements [recovery.DispatchFence]: Authorize (ctx carries
// the fence's connection, see [ConnFromContext]), the admission mark in one
// autocommit statement (sqlAdmit), then launch, all under the fence taken
// by ClaimEffect. After launch returned the fence stays held at most
// [Options.FenceLinger], unless Complete or Close comes first; on any error
// it is released before AdmitDispatch returns.
func (f *dispatchFence) AdmitDispatch(ctx context.Context, adm recovery.Admission, launch recovery.DispatchFunc) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn == nil || f.closed {
		return writeFailed("the fence is not held", nil)
	}
	err := f.s.admitHeld(ctx, f.conn, adm, launch)
	if err != nil {
		f.releaseLocked(ctx)
		return err
	}
	f.linger = time.AfterFunc(f.s.set.fenceLinger, f.lingerEnded)
	return nil
}

// lingerEnded releases the fence when the execution outlasted the linger.
func (f *dispatchFence) lingerEnded() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.releaseLocked(context.Background())
	}
}

// releaseLocked sends the unlock on its own and returns the connection to
// the pool; f.mu is held. A failed unlock closes the connection, which
// releases the lock.
func (f *dispatchFence) releaseLocked(ctx context.Context) {
	if f.conn == nil {
		return
	}
	if !f.conn.Conn().IsClosed() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.s.set.unlockTimeout)
		var released bool
		if err := f.conn.QueryRow(uctx, sqlUnlock, f.key).Scan(&released); err != nil || !released {
			_ = f.conn.Conn().Close(uctx)
		}
		cancel()
	}
	f.returnConn()
}

// returnConn returns the fence's connection to the pool once the lock is
// released; f.mu is held.
func (f *dispatchFence) returnConn() {
	f.conn.Release()
	f.conn = nil
}

// stopLinger stops the linger timer; f.mu is held.
func (f *dispatchFence) stopLinger() {
	if f.linger != nil {
		f.linger.Stop()
	}
}

// Complete implements [recovery.DispatchFence]: the completion's
// compare-and-swap and, when the fence is still held, its release, in one
// statement (sqlCompleteAndRelease) on the fence's connection, which then
// goes back to the pool. Once the fence is released it is
// CompareAndSwapEffect on a connection of its own. Errors are those of
// CompareAndSwapEffect.
func (f *dispatchFence) Complete(ctx context.Context, expected uint64, next recovery.EffectRecord) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopLinger()
	if f.closed {
		return writeFailed("the fence is closed", nil)
	}
	if f.conn == nil {
		return f.s.CompareAndSwapEffect(ctx, f.turn, expected, next)
	}
	if next.Revision != expected+1 {
		f.releaseLocked(ctx)
		return refused(refusal.CodeInvalidTurn, "the next revision must be the expected one plus one")
	}
	if err := f.s.fault(ctx, write{op: "cas", next: &next}); err != nil {
		f.releaseLocked(ctx)
		return err
	}
	if err := sendable(ctx, f.conn.Conn()); err != nil {
		f.releaseLocked(ctx) // past ctx's end, bounded by UnlockTimeout
		return err
	}
	lease, result := effectColumns(next)
	var released bool
	err := f.conn.QueryRow(ctx, sqlCompleteAndRelease, f.turn.Conversation, f.turn.Turn, next.ID, int64(expected),
		int64(next.Revision), string(next.State), next.Holder, lease, result, next.Reconciled, f.key).Scan(&released)
	switch {
	case err == nil:
		if !released {
			// The session no longer held the lock it should hold: end it.
			_ = f.conn.Conn().Close(context.WithoutCancel(ctx))
		}
		f.returnConn()
		return nil
	case errors.Is(err, pgx.ErrNoRows), retryable(err):
		// Not written (the revision moved, or a serialization failure):
		// release the fence and its connection, then ask again the plain
		// way, which answers the refusal or retries.
		f.releaseLocked(ctx)
		return f.s.CompareAndSwapEffect(ctx, f.turn, expected, next)
	}
	f.releaseLocked(ctx)
	return commitOutcome("effect write", err)
}

// Close implements [recovery.DispatchFence]: it releases the fence and
// returns its connection to the pool if it is still held.
func (f *dispatchFence) Close(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	f.stopLinger()
	f.releaseLocked(ctx)
	f.closed = true
}
