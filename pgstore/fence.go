package pgstore

import (
	"context"
	"hash/fnv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/recovery"
)

// TurnLockKey returns the key of the advisory lock that is the admission
// fence of turn: the one AdmitDispatch holds from before authorizing until
// launch returned, and EndTurn holds while it ends the turn. It is the
// 64-bit FNV-1a hash of "pgstore/turn", the conversation and the turn,
// NUL-separated, in the single-bigint key space of pg_advisory_lock. Two
// turns may share a key; they then only wait for each other.
//
// A host that wants revocation fenced against admission takes the same
// lock in its revoking transaction, with [LockTurn].
func TurnLockKey(turn recovery.TurnRef) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("pgstore/turn\x00" + turn.Conversation + "\x00" + turn.Turn))
	return int64(h.Sum64())
}

// LockTurn takes the admission fence of turn inside the host's transaction
// tx (pg_advisory_xact_lock([TurnLockKey](turn))), until tx ends: no
// admission of the turn is in progress meanwhile and none starts. A host
// revoking a caller's access calls it for the caller's running turns
// before committing the revocation, so that an admission either completes
// before the revocation or sees it. It returns the database's error.
func LockTurn(ctx context.Context, tx pgx.Tx, turn recovery.TurnRef) error {
	_, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", TurnLockKey(turn))
	return err
}

type connKey struct{}

// ConnFromContext returns the connection an AdmitDispatch holds its fence
// on, from the ctx it passes to [recovery.Admission.Authorize], so that the
// host's Authorizer may read its authorization tables on it. The
// connection is in autocommit mode and holds a session-level advisory lock:
// run queries only; never begin, commit, close or release it, and never
// unlock advisory locks on it. ok is false outside Authorize.
func ConnFromContext(ctx context.Context) (conn *pgx.Conn, ok bool) {
	c, ok := ctx.Value(connKey{}).(*pgx.Conn)
	return c, ok
}

// fence is a session-level advisory lock held on a dedicated connection.
type fence struct {
	conn *pgxpool.Conn
	key  int64
	held bool
}

// lockFence acquires a connection and the advisory lock key on it, in an
// autocommit statement of its own, so that every statement run after it
// takes its snapshot after the lock was granted, whatever the isolation
// level. An error means the lock is not held and nothing was written.
func (s settings) lockFence(ctx context.Context, pool *pgxpool.Pool, key int64) (*fence, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, writeFailed("no connection for the fence", err)
	}
	f := &fence{conn: conn, key: key}
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		// The lock may have been granted just before the error: end the
		// session, which releases it.
		_ = conn.Conn().Close(context.WithoutCancel(ctx))
		conn.Release()
		return nil, writeFailed("waiting for the fence", err)
	}
	f.held = true
	return f, nil
}

// unlock releases the lock and the connection. It uses a context that
// outlives ctx's cancellation, bounded by s.unlockTimeout; if the unlock
// fails, it closes the connection, which ends the session and so releases
// the lock.
func (s settings) unlock(ctx context.Context, f *fence) {
	if f.held && !f.conn.Conn().IsClosed() {
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.unlockTimeout)
		var released bool
		err := f.conn.QueryRow(uctx, "SELECT pg_advisory_unlock($1)", f.key).Scan(&released)
		if err != nil || !released {
			_ = f.conn.Conn().Close(uctx)
		}
		cancel()
	}
	f.held = false
	f.conn.Release()
}
