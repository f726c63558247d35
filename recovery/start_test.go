package recovery_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func TestStart(t *testing.T) {
	ctx := t.Context()

	t.Run("creates a running turn with pending effects", func(t *testing.T) {
		e := newEnv(t, nil, nil)
		rec, _ := e.worker()
		got, err := rec.Start(ctx, caller, turn, []string{"a", "b"})
		require.NoError(t, err)
		stored, ok := e.db.Snapshot(turn)
		require.True(t, ok)
		assert.Equal(t, recovery.TurnRunning, stored.Status)
		require.Len(t, stored.Effects, 2)
		for i, id := range []string{"a", "b"} {
			assert.True(t, stored.Effects[i].Equal(recovery.EffectRecord{ID: id, Revision: 1, State: recovery.EffectPending}))
			assert.True(t, got.Effects[i].Equal(stored.Effects[i]))
		}
	})

	t.Run("is idempotent for the same effects only", func(t *testing.T) {
		e := newEnv(t, nil, nil)
		rec := e.started()
		again, err := rec.Start(ctx, caller, turn, []string{"a", "b"})
		require.NoError(t, err)
		assert.Len(t, again.Effects, 2)
		_, err = rec.Start(ctx, caller, turn, []string{"a", "c"})
		require.ErrorIs(t, err, refusal.ErrClaimConflict)
		_, err = rec.Start(ctx, caller, turn, []string{"b", "a"})
		require.ErrorIs(t, err, refusal.ErrClaimConflict)
	})

	t.Run("refuses bad input and callers", func(t *testing.T) {
		e := newEnv(t, nil, nil)
		rec, _ := e.worker()
		_, err := rec.Start(ctx, caller, turn, []string{"a", "a"})
		require.ErrorIs(t, err, refusal.ErrInvalidTurn)
		_, err = rec.Start(ctx, caller, turn, []string{""})
		require.ErrorIs(t, err, refusal.ErrInvalidTurn)
		_, err = rec.Start(ctx, caller, recovery.TurnRef{Turn: "t"}, nil)
		require.ErrorIs(t, err, refusal.ErrInvalidTurn)
		_, err = rec.Start(ctx, "mallory", turn, []string{"a"})
		require.ErrorIs(t, err, refusal.ErrUnauthorized)
		_, ok := e.db.Snapshot(turn)
		assert.False(t, ok)
		bare := recovery.New(recovery.Host{Authorizer: e.host}, nil)
		_, err = bare.Start(ctx, caller, turn, []string{"a"})
		require.ErrorIs(t, err, refusal.ErrStoreUnavailable)
	})

	t.Run("failpoints", func(t *testing.T) {
		cases := []struct {
			fps     []recoverytest.Failpoint
			want    error
			created bool
		}{
			{[]recoverytest.Failpoint{"start.before"}, refusal.ErrCheckpointWriteFailed, false},
			{[]recoverytest.Failpoint{"start.ack-lost"}, nil, true},
			{[]recoverytest.Failpoint{"start.ack-lost", "load.before"}, refusal.ErrNeedsReconciliation, true},
			{[]recoverytest.Failpoint{"start.after"}, refusal.ErrNeedsReconciliation, true},
		}
		for _, tc := range cases {
			t.Run(string(tc.fps[len(tc.fps)-1]), func(t *testing.T) {
				e := newEnv(t, nil, nil)
				rec, _ := e.worker()
				for _, fp := range tc.fps {
					e.arm(fp)
				}
				_, err := rec.Start(ctx, caller, turn, []string{"a"})
				if tc.want == nil {
					require.NoError(t, err)
				} else {
					require.ErrorIs(t, err, tc.want)
				}
				_, ok := e.db.Snapshot(turn)
				assert.Equal(t, tc.created, ok)
			})
		}
	})
}

func TestLoad(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, nil, nil)
	rec := e.started()
	got, err := rec.Load(ctx, caller, turn)
	require.NoError(t, err)
	assert.Equal(t, recovery.TurnRunning, got.Status)
	_, err = rec.Load(ctx, "mallory", turn)
	require.ErrorIs(t, err, refusal.ErrUnauthorized)
	other := recovery.TurnRef{Conversation: "c-1", Turn: "t-9"}
	e.host.Grant(caller, other)
	_, err = rec.Load(ctx, caller, other)
	require.ErrorIs(t, err, refusal.ErrTurnNotRunning)
	e.arm("load.before")
	_, err = rec.Load(ctx, caller, turn)
	require.ErrorIs(t, err, refusal.ErrStoreUnavailable)
}
