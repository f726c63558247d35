package pgstore

import (
	"context"
	"errors"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATEs the adapter tells apart. Every other server error is a plain
// refusal of the statement: the transaction rolled back.
const (
	stateSerializationFailure = "40001" // serialization_failure
	stateDeadlockDetected     = "40P01" // deadlock_detected
	stateUniqueViolation      = "23505" // unique_violation
)

// defaultRetries is Options.Retries when it is 0.
const defaultRetries = 16

// pgError returns the server error in err's chain, or nil.
func pgError(err error) *pgconn.PgError {
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		return pe
	}
	return nil
}

// rolledBack reports whether err is an ERROR the server reported for a
// statement or a COMMIT: the transaction is known to have rolled back. A
// FATAL or PANIC report is not: the server may have committed before it
// ended the session (for example while waiting for a synchronous standby).
func rolledBack(err error) bool {
	pe := pgError(err)
	if pe == nil {
		return false
	}
	sev := pe.SeverityUnlocalized
	if sev == "" {
		sev = pe.Severity
	}
	return sev == "ERROR"
}

// retryable reports whether err is a serialization failure or a deadlock
// the server resolved by rolling the transaction back: running the same
// work again in a new transaction is safe, provided no callback of the
// caller ran inside the failed one.
func retryable(err error) bool {
	if !rolledBack(err) {
		return false
	}
	code := pgError(err).Code
	return code == stateSerializationFailure || code == stateDeadlockDetected
}

// uniqueViolation reports whether err is a unique_violation.
func uniqueViolation(err error) bool {
	return rolledBack(err) && pgError(err).Code == stateUniqueViolation
}

// notCommitted reports whether err, returned by an autocommit statement or
// by COMMIT that was sent, proves that nothing was committed: the server
// reported an ERROR, or COMMIT answered ROLLBACK. Any other error (a broken
// connection, a context that ended while waiting for the answer, a FATAL
// report) leaves the outcome unknown.
//
// The driver's retry hint is not consulted (docs/contract.md section
// 13.4): "not sent" is decided before sending (see sendable).
func notCommitted(err error) bool {
	return rolledBack(err) || errors.Is(err, pgx.ErrTxCommitRollback)
}

// sendable returns a writeFailed error when a write is known not to be
// sent: ctx has ended or the connection is closed. Checked right before
// the write, it is what lets the store report checkpoint-write-failed for
// a write that never left; a cancellation that lands after the check makes
// the outcome unknown, which is the safe answer.
func sendable(ctx context.Context, conn *pgx.Conn) error {
	if err := ctx.Err(); err != nil {
		return writeFailed("not sent: the context ended", err)
	}
	if conn.IsClosed() {
		return writeFailed("not sent: the connection is closed", nil)
	}
	return nil
}

// writeFailed is the refusal for a write known not to have been committed
// (code checkpoint-write-failed).
func writeFailed(msg string, cause error) error {
	return &refusal.Error{Code: refusal.CodeCheckpointWriteFailed, Message: "pgstore: " + msg, Err: cause}
}

// ackLost is the error for a write that may or may not have been committed
// (code needs-reconciliation). Callers read once; they never treat it as
// success.
func ackLost(msg string, cause error) error {
	return &refusal.Error{Code: refusal.CodeNeedsReconciliation, Message: "pgstore: " + msg, Err: cause}
}

// refused is a definite refusal with code: nothing was written.
func refused(code refusal.Code, msg string) error {
	return &refusal.Error{Code: code, Message: "pgstore: " + msg}
}

// commitOutcome turns the error of an autocommit write or of COMMIT into
// the store's answer: nil, writeFailed when nothing was committed, ackLost
// otherwise.
func commitOutcome(what string, err error) error {
	switch {
	case err == nil:
		return nil
	case refusal.CodeOf(err) != "":
		return err // the store's own verdict (sendable, a refusal)
	case notCommitted(err):
		return writeFailed(what+" not committed", err)
	}
	return ackLost(what+": outcome unknown, the acknowledgement was lost", err)
}
