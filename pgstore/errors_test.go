package pgstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/assert"
)

func TestCommitOutcome(t *testing.T) {
	serverErr := func(sev, code string) error {
		return fmt.Errorf("wrapped: %w", &pgconn.PgError{Severity: sev, SeverityUnlocalized: sev, Code: code})
	}
	cases := []struct {
		name string
		err  error
		want refusal.Code
	}{
		{"success", nil, ""},
		{"the server rolled the statement back", serverErr("ERROR", "23514"), refusal.CodeCheckpointWriteFailed},
		{"COMMIT answered ROLLBACK", pgx.ErrTxCommitRollback, refusal.CodeCheckpointWriteFailed},
		{"a FATAL report may follow a local commit", serverErr("FATAL", "57P01"), refusal.CodeNeedsReconciliation},
		{"a broken connection", errors.New("unexpected EOF"), refusal.CodeNeedsReconciliation},
		{"a context that ended while waiting", context.DeadlineExceeded, refusal.CodeNeedsReconciliation},
		{"the store's own verdict passes", refused(refusal.CodeClaimConflict, "x"), refusal.CodeClaimConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, refusal.CodeOf(commitOutcome("write", c.err)))
		})
	}
}

func TestRetryable(t *testing.T) {
	for code, want := range map[string]bool{stateSerializationFailure: true, stateDeadlockDetected: true, stateUniqueViolation: false} {
		assert.Equal(t, want, retryable(&pgconn.PgError{Severity: "ERROR", Code: code}), code)
	}
	assert.False(t, retryable(&pgconn.PgError{Severity: "FATAL", Code: stateSerializationFailure}), "a FATAL is never retried")
	assert.True(t, uniqueViolation(&pgconn.PgError{Severity: "ERROR", Code: stateUniqueViolation}))
}

func TestSendable(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, sendable(ctx, nil), refusal.ErrCheckpointWriteFailed, "an ended context sends nothing")
}
