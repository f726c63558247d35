package interactions_test

import (
	"context"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
)

// I4: an uncertain acknowledgement in three worlds — the write committed,
// nothing committed, a competitor committed — each settled by exactly one
// read and no second write.
func TestI4UncertainAcknowledgement(t *testing.T) {
	ctx := context.Background()
	worlds := []struct {
		name       string
		fault      interactionstest.Fault
		competitor *interactions.Submission // answers in the gap, through another worker
		wantErr    error
		wantStored string // submission id stored at the end, "" for none
	}{
		{"committed", interactionstest.FaultLostAckCommitted, nil, nil, "s-1"},
		{"nothing committed", interactionstest.FaultLostAckNotCommitted, nil, refusal.ErrNeedsReconciliation, ""},
		{"competitor committed", interactionstest.FaultLostAckNotCommitted, ptr(submit("s-2", "b")), refusal.ErrNeedsReconciliation, "s-2"},
		{"competitor committed the same submission", interactionstest.FaultLostAckNotCommitted, ptr(submit("s-1", "a")), nil, "s-1"},
	}
	for _, w := range worlds {
		t.Run(w.name, func(t *testing.T) {
			e := newEnv(t)
			_, rival := e.worker()
			readsAtFault, transacts, calls := -1, e.store.Transacts(), e.store.Calls()
			e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpTransact, Fault: w.fault, Then: func() {
				if w.competitor != nil {
					_, err := rival.Answer(ctx, alice, cardKey, *w.competitor)
					require.NoError(t, err)
				}
				readsAtFault = e.store.Reads()
			}})
			res, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))

			require.GreaterOrEqual(t, readsAtFault, 0, "the failpoint fired")
			assert.Equal(t, 1, e.store.Reads()-readsAtFault, "exactly one read after the lost acknowledgement")
			assert.Equal(t, 1, e.store.Transacts()-transacts, "the write is never retried")
			assert.Equal(t, 1, e.store.Calls()-calls)
			if w.wantErr != nil {
				require.ErrorIs(t, err, w.wantErr)
				assert.Zero(t, res)
			} else {
				require.NoError(t, err)
				assert.True(t, res.Reconciled)
				assert.Equal(t, "s-1", res.Record.Answer.SubmissionID)
				assert.Equal(t, e.stored(), res.Record)
			}
			if w.wantStored == "" {
				assert.Equal(t, interactions.StatusPending, e.stored().Status)
				assert.Empty(t, e.db.Transitions(cardKey))
			} else {
				assert.Equal(t, w.wantStored, e.stored().Answer.SubmissionID)
				assert.Len(t, e.db.Transitions(cardKey), 1, "a loser never advances")
			}
		})
	}

	t.Run("the one read fails", func(t *testing.T) {
		e := newEnv(t)
		transacts := e.store.Transacts()
		e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpTransact, Fault: interactionstest.FaultLostAckCommitted, Then: func() {
			e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpRead, Fault: interactionstest.FaultUnavailable})
		}})
		_, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		assert.ErrorIs(t, err, interactionstest.ErrAckLost)
		assert.ErrorIs(t, err, interactionstest.ErrUnavailable)
		assert.Equal(t, 2, e.store.Reads(), "the early read and the one read")
		assert.Equal(t, 1, e.store.Transacts()-transacts)
		// The answer did commit; a retry of the same submission finds it.
		res, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrDuplicateAnswer)
		assert.Equal(t, "s-1", res.Record.Answer.SubmissionID)
	})

	t.Run("backend transitions", func(t *testing.T) {
		e := newEnv(t)
		e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpTransact, Fault: interactionstest.FaultLostAckCommitted})
		res, err := e.res.Cancel(ctx, cardKey, "turn cancelled")
		require.NoError(t, err)
		assert.True(t, res.Reconciled)
		assert.Equal(t, interactions.StatusCancelled, res.Record.Status)

		e = newEnv(t)
		e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpTransact, Fault: interactionstest.FaultLostAckNotCommitted})
		_, err = e.res.Cancel(ctx, cardKey, "turn cancelled")
		require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
		assert.Equal(t, interactions.StatusPending, e.stored().Status)
	})
}

// A store that knows nothing was committed gets no read: the refusal says
// so and the request may be repeated.
func TestDefiniteWriteFailure(t *testing.T) {
	ctx := context.Background()
	for _, f := range []interactionstest.Fault{interactionstest.FaultRollback, interactionstest.FaultUnavailable} {
		e := newEnv(t)
		e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpTransact, Fault: f})
		_, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.ErrorIs(t, err, refusal.ErrCheckpointWriteFailed, "fault %d", f)
		assert.Equal(t, 1, e.store.Reads(), "only the early read")
		assert.Equal(t, interactions.StatusPending, e.stored().Status)
		_, err = e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
		require.NoError(t, err)
	}

	e := newEnv(t)
	transacts := e.store.Transacts()
	e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpRead, Fault: interactionstest.FaultUnavailable})
	_, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
	require.ErrorIs(t, err, refusal.ErrStoreUnavailable)
	assert.Equal(t, transacts, e.store.Transacts())
}

func ptr[T any](v T) *T { return &v }

// A lost acknowledgement followed by a revocation: the answer committed,
// but the one read no longer authorizes the caller. The outcome is unknown
// to that caller, never "no such card" or "unauthorized".
func TestLostAckThenRevoked(t *testing.T) {
	ctx := context.Background()
	for _, revoke := range []struct {
		name string
		do   func(e *env)
	}{
		{"membership revoked", func(e *env) { e.db.Revoke(alice, conv) }},
		{"caller suspended", func(e *env) { e.db.Suspend(alice) }},
	} {
		t.Run(revoke.name, func(t *testing.T) {
			e := newEnv(t)
			e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpTransact, Fault: interactionstest.FaultLostAckCommitted, Then: func() {
				revoke.do(e)
			}})
			res, err := e.res.Answer(ctx, alice, cardKey, submit("s-1", "a"))
			require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
			assert.Equal(t, refusal.CodeNeedsReconciliation, refusal.CodeOf(err))
			assert.ErrorIs(t, err, interactionstest.ErrAckLost)
			assert.Zero(t, res)
			assert.Equal(t, interactions.StatusAnswered, e.stored().Status, "the answer did commit")
			assert.Equal(t, "s-1", e.stored().Answer.SubmissionID)
		})
	}
}
