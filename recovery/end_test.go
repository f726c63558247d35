package recovery_test

import (
	"context"
	"errors"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
)

func TestCancel(t *testing.T) {
	ctx := t.Context()

	t.Run("commits, then aborts; idempotent", func(t *testing.T) {
		e := newEnv(t, nil, nil)
		rec := e.started()
		require.NoError(t, rec.Cancel(ctx, caller, turn))
		assert.Equal(t, recovery.TurnCancelled, e.status())
		require.NoError(t, rec.Cancel(ctx, caller, turn))
		assert.Len(t, e.host.Aborts(), 2, "a repeated cancel aborts again")
		require.ErrorIs(t, rec.Finish(ctx, caller, turn, recovery.TurnCompleted), refusal.ErrTurnNotRunning)
		assert.Equal(t, recovery.TurnCancelled, e.status(), "an ended turn never changes")
	})

	t.Run("the abort hook cannot authorize a launch", func(t *testing.T) {
		var rec *recovery.TurnRecovery
		var e *env
		var hookErr error
		e = newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
		rec = e.started()
		hook := abortFunc(func(ctx context.Context, _ recovery.TurnRef, _ []string) error {
			_, hookErr = rec.Execute(ctx, caller, ref("b"), e.host)
			return nil
		})
		canceller := recovery.New(recovery.Host{Store: e.db.Open("c"), Authorizer: e.host, Aborter: hook}, nil)
		require.NoError(t, canceller.Cancel(ctx, caller, turn))
		require.ErrorIs(t, hookErr, refusal.ErrTurnNotRunning)
		assert.Equal(t, 0, e.host.MaxLaunches())
	})

	t.Run("refusals and failpoints", func(t *testing.T) {
		e := newEnv(t, nil, nil)
		rec := e.started()
		require.ErrorIs(t, rec.Cancel(ctx, "mallory", turn), refusal.ErrUnauthorized)
		e.arm("cancel.before")
		require.ErrorIs(t, rec.Cancel(ctx, caller, turn), refusal.ErrCheckpointWriteFailed)
		assert.Equal(t, recovery.TurnRunning, e.status())
		assert.Empty(t, e.host.Aborts(), "no abort before a committed cancellation")
		e.arm("cancel.ack-lost")
		require.NoError(t, rec.Cancel(ctx, caller, turn), "one read finds the cancellation")
		assert.Len(t, e.host.Aborts(), 1)

		other := recovery.TurnRef{Conversation: "c-1", Turn: "t-2"}
		e.host.Grant(caller, other)
		require.ErrorIs(t, rec.Cancel(ctx, caller, other), refusal.ErrTurnNotRunning)
	})

	t.Run("ack lost and unreadable, or crash", func(t *testing.T) {
		for _, fps := range [][]recoverytest.Failpoint{{"cancel.ack-lost", "load.before"}, {"cancel.after"}} {
			e := newEnv(t, nil, nil)
			rec := e.started()
			for _, fp := range fps {
				e.arm(fp)
			}
			require.ErrorIs(t, rec.Cancel(ctx, caller, turn), refusal.ErrNeedsReconciliation)
			assert.Equal(t, recovery.TurnCancelled, e.status())
			assert.Empty(t, e.host.Aborts())
		}
	})

	t.Run("abort hook failure", func(t *testing.T) {
		e := newEnv(t, &recoverytest.HostOptions{AbortErr: errors.New("runner unreachable")}, nil)
		rec := e.started()
		require.ErrorIs(t, rec.Cancel(ctx, caller, turn), refusal.ErrNeedsReconciliation)
		assert.Equal(t, recovery.TurnCancelled, e.status(), "the cancellation stands")
	})
}

type abortFunc func(ctx context.Context, turn recovery.TurnRef, inFlight []string) error

func (f abortFunc) Abort(ctx context.Context, turn recovery.TurnRef, inFlight []string) error {
	return f(ctx, turn, inFlight)
}

func TestFinish(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, &recoverytest.HostOptions{Outcome: okOutcome}, nil)
	rec := e.started()
	require.ErrorIs(t, rec.Finish(ctx, caller, turn, recovery.TurnCancelled), refusal.ErrInvalidTurn)
	require.ErrorIs(t, rec.Finish(ctx, caller, turn, recovery.TurnRunning), refusal.ErrInvalidTurn)
	require.NoError(t, rec.Finish(ctx, caller, turn, recovery.TurnCompleted))
	require.NoError(t, rec.Finish(ctx, caller, turn, recovery.TurnCompleted), "idempotent")
	require.ErrorIs(t, rec.Finish(ctx, caller, turn, recovery.TurnFailed), refusal.ErrTurnNotRunning)
	_, err := rec.Execute(ctx, caller, ref("a"), e.host)
	require.ErrorIs(t, err, refusal.ErrTurnNotRunning)
	assert.Equal(t, 0, e.host.MaxLaunches())
	assert.Empty(t, e.host.Aborts(), "Finish does not abort")
}
