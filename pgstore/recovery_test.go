package pgstore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/pgstore/internal/lossyproxy"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// startProxy starts a lossy proxy in front of the test server, closed when
// t ends.
func startProxy(t testing.TB) *lossyproxy.Proxy {
	t.Helper()
	needDB(t)
	cfg, err := pgx.ParseConfig(testDSN)
	require.NoError(t, err)
	p, err := lossyproxy.Start(cfg.Host + ":" + itoa(int(cfg.Port)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// newRecoveryStore returns a store at isolation iso on a pool of its own.
func newRecoveryStore(t testing.TB, o poolOpts) *RecoveryStore {
	t.Helper()
	st, err := NewRecoveryStore(newPool(t, o), &Options{Isolation: o.iso})
	require.NoError(t, err)
	return st
}

// siteOf names the recoverytest site of a write of the store.
func siteOf(w write) recoverytest.Site {
	switch w.op {
	case "create":
		return recoverytest.SiteStart
	case "admit":
		return recoverytest.SiteAdmit
	case "load":
		return recoverytest.SiteLoad
	case "end":
		if w.end == recovery.TurnCancelled {
			return recoverytest.SiteCancel
		}
		return recoverytest.SiteFinish
	}
	switch {
	case w.next.State == recovery.EffectCompleted && w.next.Reconciled:
		return recoverytest.SiteReconcile
	case w.next.State == recovery.EffectCompleted:
		return recoverytest.SiteComplete
	case w.next.State == recovery.EffectNeedsReconciliation:
		return recoverytest.SiteMark
	}
	return recoverytest.SiteClaim
}

// armer injects recoverytest failpoints into a RecoveryStore: "before"
// fails the write before it is sent; "after" and "ack-lost" let it commit
// and have the proxy cut the connection before the acknowledgement
// arrives (a real lost acknowledgement; "after" then reads through a fresh
// pool, as a restarted worker would).
type armer struct {
	proxy *lossyproxy.Proxy
	mu    sync.Mutex
	armed map[recoverytest.Site]recoverytest.Mode
}

func (a *armer) arm(fp recoverytest.Failpoint) error {
	site, mode, _ := strings.Cut(string(fp), ".")
	a.mu.Lock()
	defer a.mu.Unlock()
	a.armed[recoverytest.Site(site)] = recoverytest.Mode(mode)
	return nil
}

func (a *armer) fault(_ context.Context, w write) error {
	site := siteOf(w)
	a.mu.Lock()
	mode, ok := a.armed[site]
	delete(a.armed, site)
	a.mu.Unlock()
	switch {
	case !ok:
		return nil
	case mode == recoverytest.ModeBefore && site == recoverytest.SiteLoad:
		return errors.New("pgstore test: injected read failure")
	case mode == recoverytest.ModeBefore:
		return writeFailed("injected failure before the write was sent", nil)
	}
	a.proxy.CutNext(1)
	return nil
}

// TestRecoveryStoreConformance runs recoverytest.TestStore against the
// real server, at both isolation levels, with every failpoint: before the
// write (injected), and after it with the acknowledgement lost on the
// wire (the proxy cuts the connection after the server's commit).
func TestRecoveryStoreConformance(t *testing.T) {
	// Skip here: the subject constructor has no t to skip.
	needDB(t)
	for _, iso := range isolations {
		t.Run(isoName(iso), func(t *testing.T) {
			recoverytest.TestStore(t, recoverytest.Config{NewSubject: recoverySubject(iso)})
		})
	}
}

func TestRecoveryStoreRefusesInvalidInput(t *testing.T) {
	st := newRecoveryStore(t, poolOpts{})
	ctx := t.Context()
	turn := recovery.TurnRef{Conversation: "c-invalid", Turn: "t-1"}
	dup := recovery.TurnRecord{Turn: turn, Status: recovery.TurnRunning, Effects: []recovery.EffectRecord{
		{ID: "a", Revision: 1, State: recovery.EffectPending}, {ID: "a", Revision: 1, State: recovery.EffectPending}}}
	assert.ErrorIs(t, st.CreateTurn(ctx, dup), refusal.ErrInvalidTurn, "duplicated effect id")
	ended := recovery.TurnRecord{Turn: turn, Status: recovery.TurnCancelled}
	assert.ErrorIs(t, st.CreateTurn(ctx, ended), refusal.ErrInvalidTurn, "a new turn is running")
	_, err := st.LoadTurn(ctx, turn)
	assert.ErrorIs(t, err, refusal.ErrTurnNotRunning, "nothing was stored")

	require.NoError(t, st.CreateTurn(ctx, recovery.TurnRecord{Turn: turn, Status: recovery.TurnRunning}))
	rec, err := st.LoadTurn(ctx, turn)
	require.NoError(t, err)
	assert.Equal(t, recovery.TurnRunning, rec.Status, "a turn without effects loads")
	assert.Empty(t, rec.Effects)
	_, err = st.EndTurn(ctx, turn, recovery.TurnRunning)
	assert.ErrorIs(t, err, refusal.ErrInvalidTurn, "running is not an end status")
	err = st.CompareAndSwapEffect(ctx, turn, 1, recovery.EffectRecord{ID: "a", Revision: 3})
	assert.ErrorIs(t, err, refusal.ErrInvalidTurn, "a revision that skips")
	err = st.AdmitDispatch(ctx, recovery.Admission{Effect: recovery.EffectRef{Turn: turn, Effect: "a"}}, nil)
	assert.ErrorIs(t, err, refusal.ErrUnauthorized, "no authority check")
}

// TestRecoveryStoreRoundTrip stores every field of an effect record and
// reads it back through another pool.
func TestRecoveryStoreRoundTrip(t *testing.T) {
	st := newRecoveryStore(t, poolOpts{})
	other := newRecoveryStore(t, poolOpts{})
	ctx := t.Context()
	turn := recovery.TurnRef{Conversation: "c-roundtrip", Turn: "t-ü"}
	require.NoError(t, st.CreateTurn(ctx, recovery.TurnRecord{Turn: turn, Status: recovery.TurnRunning, Effects: []recovery.EffectRecord{
		{ID: "z", Revision: 1, State: recovery.EffectPending}, {ID: "a", Revision: 1, State: recovery.EffectPending}}}))
	lease := time.Date(2031, 5, 6, 7, 8, 9, 123456000, time.FixedZone("x", 3600))
	done := recovery.EffectRecord{ID: "z", Revision: 2, State: recovery.EffectCompleted, Holder: "w/1",
		LeaseUntil: lease, Result: recovery.Result{Data: []byte{0, 1, 0xff}}, Reconciled: true}
	require.NoError(t, st.CompareAndSwapEffect(ctx, turn, 1, done))
	rec, err := other.LoadTurn(ctx, turn)
	require.NoError(t, err)
	require.Len(t, rec.Effects, 2)
	assert.Equal(t, "z", rec.Effects[0].ID, "effects keep the order they were authorized in")
	assert.True(t, rec.Effects[0].Equal(done), "got %+v", rec.Effects[0])
	assert.True(t, rec.Effects[1].Equal(recovery.EffectRecord{ID: "a", Revision: 1, State: recovery.EffectPending}))
}

// TestAuthorizeSeesTheFenceConnection: the host's authorizer can read on
// the connection that holds the fence, and the lock is held meanwhile.
func TestAuthorizeSeesTheFenceConnection(t *testing.T) {
	st := newRecoveryStore(t, poolOpts{})
	ctx := t.Context()
	turn := recovery.TurnRef{Conversation: "c-authconn", Turn: "t-1"}
	require.NoError(t, st.CreateTurn(ctx, recovery.TurnRecord{Turn: turn, Status: recovery.TurnRunning, Effects: []recovery.EffectRecord{
		{ID: "a", Revision: 1, State: recovery.EffectPending}}}))
	require.NoError(t, st.CompareAndSwapEffect(ctx, turn, 1, recovery.EffectRecord{ID: "a", Revision: 2, State: recovery.EffectClaimed, Holder: "h"}))
	var held bool
	adm := recovery.Admission{Effect: recovery.EffectRef{Turn: turn, Effect: "a"}, Revision: 2, Holder: "h",
		Authorize: func(actx context.Context) error {
			conn, ok := ConnFromContext(actx)
			if !ok {
				return errors.New("no connection in the authorizer's context")
			}
			return conn.QueryRow(actx, `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
				AND pid = pg_backend_pid() AND granted AND ((classid::bigint << 32) | objid::bigint) = $1)`,
				TurnLockKey(turn)).Scan(&held)
		}}
	launched := 0
	require.NoError(t, st.AdmitDispatch(ctx, adm, func(context.Context) error { launched++; return nil }))
	assert.True(t, held, "the fence connection holds the turn's advisory lock while authorizing")
	assert.Equal(t, 1, launched)
	_, ok := ConnFromContext(ctx)
	assert.False(t, ok, "no connection outside Authorize")
}

func TestOptions(t *testing.T) {
	_, err := NewRecoveryStore(nil, nil)
	assert.Error(t, err)
	needDB(t)
	pool := newPool(t, poolOpts{})
	_, err = NewRecoveryStore(pool, &Options{Isolation: pgx.RepeatableRead})
	assert.ErrorIs(t, err, errRepeatableRead)
	_, err = NewRecoveryStore(pool, &Options{Isolation: "chaos"})
	assert.Error(t, err)
	_, err = NewRecoveryStore(pool, &Options{Retries: -1})
	assert.Error(t, err)
	_, err = NewInteractionStore(pool, nil, nil)
	assert.Error(t, err)
}
