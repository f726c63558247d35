package recovery_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// askedStore counts every call a TurnRecovery makes of its Store.
type askedStore struct {
	*recoverytest.Store
	asked atomic.Int64
}

func (s *askedStore) CreateTurn(ctx context.Context, rec recovery.TurnRecord) error {
	s.asked.Add(1)
	return s.Store.CreateTurn(ctx, rec)
}

func (s *askedStore) LoadTurn(ctx context.Context, turn recovery.TurnRef) (recovery.TurnRecord, error) {
	s.asked.Add(1)
	return s.Store.LoadTurn(ctx, turn)
}

func (s *askedStore) EndTurn(ctx context.Context, turn recovery.TurnRef, status recovery.TurnStatus) (recovery.TurnRecord, error) {
	s.asked.Add(1)
	return s.Store.EndTurn(ctx, turn, status)
}

// Ids no store can hold as sent (a NUL, invalid UTF-8) are refused with
// invalid-input before the store is asked, whatever the operation: never
// store-unavailable or checkpoint-write-failed, which invite a retry.
func TestUnstorableIDsRefusedBeforeTheStore(t *testing.T) {
	ctx := t.Context()
	for _, id := range []string{"a\x00b", "\xff\xfe", "ok\xc3"} {
		e := newEnv(t, nil, nil)
		st := &askedStore{Store: e.db.Open("w")}
		rec := recovery.New(recovery.Host{Store: st, Authorizer: e.host, Aborter: e.host},
			&recovery.Options{Lease: time.Minute, Now: e.clock.Now})
		_, err := rec.Start(ctx, caller, recovery.TurnRef{Conversation: id, Turn: "t"}, []string{"a"})
		require.ErrorIs(t, err, refusal.ErrInvalidInput, "%q", id)
		_, err = rec.Start(ctx, caller, turn, []string{"a", id})
		require.ErrorIs(t, err, refusal.ErrInvalidInput, "%q", id)
		assert.Equal(t, "/effects/1", err.(*refusal.Error).Path)
		_, err = rec.Execute(ctx, caller, recovery.EffectRef{Turn: turn, Effect: id}, e.host)
		assert.Equal(t, refusal.CodeInvalidInput, refusal.CodeOf(err), "%q", id)
		_, err = rec.Reconcile(ctx, caller, recovery.EffectRef{Turn: recovery.TurnRef{Conversation: "c", Turn: id}, Effect: "a"}, verifiedAs("x"))
		assert.ErrorIs(t, err, refusal.ErrInvalidInput, "%q", id)
		assert.ErrorIs(t, rec.Cancel(ctx, caller, recovery.TurnRef{Conversation: id, Turn: "t"}), refusal.ErrInvalidInput)
		_, err = rec.Load(ctx, caller, recovery.TurnRef{Conversation: "c", Turn: id})
		assert.ErrorIs(t, err, refusal.ErrInvalidInput)
		assert.Zero(t, st.asked.Load(), "the store was never asked")
		assert.Zero(t, e.host.MaxLaunches())
	}
}

// A worker name no store can hold is refused before the store, too: it is
// stored in every claim.
func TestUnstorableWorkerRefused(t *testing.T) {
	e := newEnv(t, nil, nil)
	st := &askedStore{Store: e.db.Open("w")}
	rec := recovery.New(recovery.Host{Store: st, Authorizer: e.host}, &recovery.Options{Worker: "host\x00boot"})
	_, err := rec.Start(t.Context(), caller, turn, []string{"a"})
	require.ErrorIs(t, err, refusal.ErrInvalidInput)
	assert.Zero(t, st.asked.Load())
}
