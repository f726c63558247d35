package recoverytest_test

import (
	"context"
	"testing"
	"time"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
)

var lt = recovery.TurnRef{Conversation: "c", Turn: "t"}

func claimRec(rev uint64, holder string) recovery.EffectRecord {
	return recovery.EffectRecord{ID: "a", Revision: rev, State: recovery.EffectClaimed, Holder: holder}
}

func noop(context.Context) error { return nil }

func admit(rev uint64, holder string) recovery.Admission {
	return recovery.Admission{Effect: recovery.EffectRef{Turn: lt, Effect: "a"}, Revision: rev, Holder: holder, Authorize: noop}
}

func start(t *testing.T, st recovery.Store) {
	t.Helper()
	require.NoError(t, st.CreateTurn(t.Context(), recovery.TurnRecord{Turn: lt, Status: recovery.TurnRunning,
		Effects: []recovery.EffectRecord{{ID: "a", Revision: 1, State: recovery.EffectPending}}}))
}

func TestLinearizableAcceptsASoundHistoryWithUncertainOutcomes(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := t.Context()
	db := recoverytest.NewDB(nil)
	h := recoverytest.NewHistory()
	st := h.Wrap(db.Open("w"), 0)
	start(t, st)
	require.NoError(t, db.Arm("claim.ack-lost"))
	require.Error(t, st.CompareAndSwapEffect(ctx, lt, 1, claimRec(2, "h")))
	require.NoError(t, db.Arm("admit.before"))
	require.Error(t, st.(recovery.Admitter).AdmitDispatch(ctx, admit(2, "h"), noop))
	require.NoError(t, st.(recovery.Admitter).AdmitDispatch(ctx, admit(2, "h"), noop))
	_, err := st.LoadTurn(ctx, lt)
	require.NoError(t, err)
	_, err = st.EndTurn(ctx, lt, recovery.TurnCancelled)
	require.NoError(t, err)
	assert.Equal(t, 6, h.Len())
	assert.NoError(t, h.CheckLinearizable(10*time.Second))
}

func TestLinearizableCatchesASecondLaunch(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := t.Context()
	db := recoverytest.NewDB(&recoverytest.DBOptions{Broken: recoverytest.BrokenIgnoresRevision})
	h := recoverytest.NewHistory()
	st := h.Wrap(db.Open("w"), 0)
	start(t, st)
	adm := st.(recovery.Admitter)
	require.NoError(t, st.CompareAndSwapEffect(ctx, lt, 1, claimRec(2, "h1")))
	require.NoError(t, adm.AdmitDispatch(ctx, admit(2, "h1"), noop))
	// A stale claim the broken store accepts, then a second admission.
	require.NoError(t, st.CompareAndSwapEffect(ctx, lt, 1, claimRec(2, "h2")))
	require.NoError(t, adm.AdmitDispatch(ctx, admit(2, "h2"), noop))
	assert.Error(t, h.CheckLinearizable(10*time.Second))
}

func TestLinearizableCatchesARewrittenTerminalRecord(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := t.Context()
	db := recoverytest.NewDB(nil)
	h := recoverytest.NewHistory()
	st := h.Wrap(db.Open("w"), 0)
	start(t, st)
	done := recovery.EffectRecord{ID: "a", Revision: 2, State: recovery.EffectCompleted, Result: recovery.Result{Data: []byte("x")}}
	require.NoError(t, st.CompareAndSwapEffect(ctx, lt, 1, done))
	again := done.Clone()
	again.Revision, again.Result = 3, recovery.Result{Data: []byte("y")}
	require.NoError(t, st.CompareAndSwapEffect(ctx, lt, 2, again))
	assert.Error(t, h.CheckLinearizable(10*time.Second))
}

func TestLinearizableCatchesAStaleRead(t *testing.T) {
	defer goleak.VerifyNone(t)
	// A history whose read returns a state older than a completed write
	// cannot be linearized: fabricate it through a store that serves a
	// snapshot.
	ctx := t.Context()
	db := recoverytest.NewDB(nil)
	h := recoverytest.NewHistory()
	real := db.Open("w")
	st := h.Wrap(real, 0)
	start(t, st)
	old, err := real.LoadTurn(ctx, lt)
	require.NoError(t, err)
	require.NoError(t, st.CompareAndSwapEffect(ctx, lt, 1, claimRec(2, "h")))
	stale := h.Wrap(staleStore{Store: real, rec: old}, 1)
	_, err = stale.LoadTurn(ctx, lt)
	require.NoError(t, err)
	assert.Error(t, h.CheckLinearizable(10*time.Second))
}

type staleStore struct {
	recovery.Store
	rec recovery.TurnRecord
}

func (s staleStore) LoadTurn(context.Context, recovery.TurnRef) (recovery.TurnRecord, error) {
	return s.rec.Clone(), nil
}
