package pgstore

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// poolBound bounds every call of the pool-size tests: their tools take
// 20 ms, so a call that needs longer waits for a connection that does not
// come back.
const poolBound = 10 * time.Second

var errToolFailed = errors.New("tool failed")

// poolHost is a test host: its Launcher runs each tool on a goroutine of
// its own (recovery.Go) for d, under a dispatch context its Aborter
// cancels; a tool whose effect is in fail returns an error at once (an
// unknown outcome), one in hang runs until aborted.
type poolHost struct {
	d          time.Duration
	fail, hang map[string]bool

	mu       sync.Mutex
	launched map[recovery.EffectRef]int
	cancels  map[recovery.TurnRef][]context.CancelFunc
	aborted  map[recovery.TurnRef][]string // nil until the turn's first abort
}

func newPoolHost(d time.Duration) *poolHost {
	return &poolHost{d: d, launched: map[recovery.EffectRef]int{},
		cancels: map[recovery.TurnRef][]context.CancelFunc{}, aborted: map[recovery.TurnRef][]string{}}
}

func (h *poolHost) Launch(_ context.Context, e recovery.EffectRef) (recovery.Execution, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.launched[e]++
	dctx, cancel := context.WithCancel(context.Background())
	h.cancels[e.Turn] = append(h.cancels[e.Turn], cancel)
	if _, ok := h.aborted[e.Turn]; ok {
		cancel() // an abort also stops executions that register after it
	}
	d, fail, hang := h.d, h.fail[e.Effect], h.hang[e.Effect]
	return recovery.Go(dctx, func(ctx context.Context) (recovery.Result, error) {
		defer cancel()
		if fail {
			return recovery.Result{}, errToolFailed
		}
		t := time.NewTimer(d)
		defer t.Stop()
		if hang {
			t.Stop()
		}
		select {
		case <-t.C:
			return recovery.Result{Data: []byte("ran:" + e.Effect)}, nil
		case <-ctx.Done():
			return recovery.Result{Data: []byte("aborted:" + e.Effect)}, nil
		}
	}), nil
}

func (h *poolHost) Abort(_ context.Context, turn recovery.TurnRef, inFlight []string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.aborted[turn] = append(h.aborted[turn], inFlight...)
	for _, c := range h.cancels[turn] {
		c()
	}
	return nil
}

func (h *poolHost) launches(e recovery.EffectRef) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.launched[e]
}

func (h *poolHost) launchedOf(turn recovery.TurnRef) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for e, c := range h.launched {
		if e.Turn == turn {
			n += c
		}
	}
	return n
}

func (h *poolHost) abortedOf(turn recovery.TurnRef) ([]string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a, ok := h.aborted[turn]
	return slices.Clone(a), ok
}

// poolDBAuthorizer is a host's Authorizer that reads its (here trivial)
// authorization table the way ConnFromContext's doc says: on the fence's
// connection inside the admission fence, on the pool elsewhere.
type poolDBAuthorizer struct{ pool *pgxpool.Pool }

func (a poolDBAuthorizer) Authorize(ctx context.Context, _ string, _ recovery.TurnRef, _ recovery.Action) error {
	var ok bool
	var err error
	if conn, in := ConnFromContext(ctx); in {
		err = conn.QueryRow(ctx, "SELECT true").Scan(&ok)
	} else {
		err = a.pool.QueryRow(ctx, "SELECT true").Scan(&ok)
	}
	if err == nil && !ok {
		err = errors.New("refused")
	}
	return err
}

// executeAll runs one Execute per effect, all at once, each by a worker of
// its own with a context bounded by poolBound, and returns their results
// and errors in the order of effects.
func executeAll(rec []*recovery.TurnRecovery, effects []recovery.EffectRef, l recovery.Launcher) ([]recovery.Result, []error) {
	res := make([]recovery.Result, len(effects))
	errs := make([]error, len(effects))
	gate := make(chan struct{})
	var wg sync.WaitGroup
	for i, e := range effects {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), poolBound)
			defer cancel()
			<-gate
			res[i], errs[i] = rec[i].Execute(ctx, "host", e, l)
		})
	}
	close(gate)
	wg.Wait()
	return res, errs
}

// requireAllRan starts the turns of effects, executes every effect at once
// through st, and checks that each call returned its tool's result within
// poolBound, that the tool ran once, and that each effect is stored
// completed with that result.
func requireAllRan(t *testing.T, st *RecoveryStore, effects []recovery.EffectRef) {
	t.Helper()
	ctx := t.Context()
	host := newPoolHost(20 * time.Millisecond)
	ws := newWorkers(st, len(effects))
	ids := map[recovery.TurnRef][]string{}
	for _, e := range effects {
		ids[e.Turn] = append(ids[e.Turn], e.Effect)
	}
	for turn, es := range ids {
		_, err := ws[0].Start(ctx, "host", turn, es)
		require.NoError(t, err)
	}
	start := time.Now()
	res, errs := executeAll(ws, effects, host)
	t.Logf("%d concurrent Execute calls of 20 ms tools over %d connections: %v",
		len(effects), st.pool.Config().MaxConns, time.Since(start).Round(time.Millisecond))
	for i, e := range effects {
		if assert.NoError(t, errs[i], "Execute %v", e) {
			assert.Equal(t, "ran:"+e.Effect, string(res[i].Data), "Execute %v", e)
		}
		assert.Equal(t, 1, host.launches(e), "launches of %v", e)
	}
	for turn, es := range ids {
		rec, err := st.LoadTurn(ctx, turn)
		require.NoError(t, err)
		for _, id := range es {
			eff, ok := rec.Effect(id)
			require.True(t, ok)
			assert.Equal(t, recovery.EffectCompleted, eff.State, "effect %s of %v", id, turn)
			assert.Equal(t, "ran:"+id, string(eff.Result.Data), "effect %s of %v", id, turn)
		}
	}
}

// poolEffects returns n effects spread over turns of perTurn effects each,
// under a prefix unique to the test.
func poolEffects(prefix string, n, perTurn int) []recovery.EffectRef {
	out := make([]recovery.EffectRef, n)
	tag := prefix + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
	for i := range out {
		out[i] = recovery.EffectRef{Turn: recovery.TurnRef{Conversation: tag + strconv.Itoa(i/perTurn), Turn: "t"},
			Effect: "e" + strconv.Itoa(i%perTurn)}
	}
	return out
}

// TestRecoveryAtPoolSize: with pgxpool's MaxConns equal to the number of
// concurrent Execute calls (4 and 4, tools of 20 ms), every call returns
// its tool's stored result and every effect ends completed, whether the
// effects belong to four turns or to one (whose admissions wait for each
// other's fence), and also over fewer connections than calls.
func TestRecoveryAtPoolSize(t *testing.T) {
	const calls = 4
	for _, c := range []struct {
		name     string
		maxConns int32
		perTurn  int
	}{
		{"four-turns", calls, 1},
		{"one-turn", calls, calls},
		{"two-connections", 2, 2},
		{"one-connection", 1, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := newRecoveryStore(t, poolOpts{maxConns: c.maxConns})
			require.Equal(t, c.maxConns, st.pool.Config().MaxConns)
			requireAllRan(t, st, poolEffects("pool-"+c.name, calls, c.perTurn))
		})
	}
}

// TestRecoveryAtDefaultPoolSize: on a pool of pgx's default size,
// max(4, NumCPU), a few more concurrent Execute calls than connections
// all return their tools' stored results.
func TestRecoveryAtDefaultPoolSize(t *testing.T) {
	st := newRecoveryStore(t, poolOpts{})
	size := int(st.pool.Config().MaxConns)
	require.Equal(t, max(4, runtime.NumCPU()), size, "pgx's default pool size")
	requireAllRan(t, st, poolEffects("pool-default", size+3, 2))
}

// TestFailedToolsAtPoolSize: tools that fail at once (an unknown outcome)
// have their effects marked needs-reconciliation while the fence may still
// be held: every call returns needs-reconciliation within the bound, and
// every effect is stored so, with MaxConns equal to the calls; also when
// the fence lingers longer than the bound (Options.FenceLinger), so that
// no call may wait for a fence's connection to come back.
func TestFailedToolsAtPoolSize(t *testing.T) {
	const calls = 4
	for _, linger := range []time.Duration{0, 2 * poolBound} {
		name := "linger=default"
		if linger > 0 {
			name = "linger=" + linger.String()
		}
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			st, err := NewRecoveryStore(newPool(t, poolOpts{maxConns: calls}), &Options{FenceLinger: linger})
			require.NoError(t, err)
			host := newPoolHost(20 * time.Millisecond)
			effects := poolEffects("pool-fail", calls, 2)
			host.fail = map[string]bool{}
			for _, e := range effects {
				host.fail[e.Effect] = true
			}
			ws := newWorkers(st, calls)
			for _, turn := range []recovery.TurnRef{effects[0].Turn, effects[2].Turn} {
				_, err := ws[0].Start(ctx, "host", turn, []string{"e0", "e1"})
				require.NoError(t, err)
			}
			_, errs := executeAll(ws, effects, host)
			for i, e := range effects {
				assert.Equal(t, refusal.CodeNeedsReconciliation, refusal.CodeOf(errs[i]), "Execute %v: %v", e, errs[i])
				assert.ErrorIs(t, errs[i], errToolFailed, "Execute %v", e)
				rec, err := st.LoadTurn(ctx, e.Turn)
				require.NoError(t, err)
				eff, _ := rec.Effect(e.Effect)
				assert.Equal(t, recovery.EffectNeedsReconciliation, eff.State, "effect %v", e)
				assert.Equal(t, 1, host.launches(e), "launches of %v", e)
			}
		})
	}
}

// TestCancelAtPoolSize: a Cancel races the in-flight effects of its turn
// with MaxConns equal to the concurrent Execute calls (the Cancel comes on
// top), at moments from before the first launch to after the tools
// returned. Every call ends within the bound; the Cancel commits; an
// effect launched is in the committed record, aborted if it was in
// flight, and stores the result its call returned; one not launched was
// refused as turn-not-running and is never admitted.
func TestCancelAtPoolSize(t *testing.T) {
	const (
		calls  = 4
		rounds = 24
	)
	ctx := t.Context()
	st := observe(newRecoveryStore(t, poolOpts{maxConns: calls}))
	host := newPoolHost(20 * time.Millisecond)
	ws := make([]*recovery.TurnRecovery, calls+1)
	for i := range ws {
		ws[i] = recovery.New(recovery.Host{Store: st, Authorizer: allowAll{}, Aborter: host}, &recovery.Options{Worker: "w" + strconv.Itoa(i)})
	}
	ids := []string{"e0", "e1", "e2", "e3"}
	for r := range rounds {
		turn := recovery.TurnRef{Conversation: "pool-cancel-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(r), Turn: "t"}
		_, err := ws[0].Start(ctx, "host", turn, ids)
		require.NoError(t, err)
		effects := make([]recovery.EffectRef, calls)
		for i := range effects {
			effects[i] = recovery.EffectRef{Turn: turn, Effect: ids[i]}
		}
		var cancelErr error
		var cancelled sync.WaitGroup
		cancelled.Go(func() {
			cctx, cancel := context.WithTimeout(context.Background(), poolBound)
			defer cancel()
			// Round r cancels at once (r%6 == 0) or (r%6)*4 ms after the
			// first launch: before, among and after the 20 ms tools.
			if wait := time.Duration(r%6) * 4 * time.Millisecond; wait > 0 {
				for host.launchedOf(turn) == 0 && cctx.Err() == nil {
					time.Sleep(100 * time.Microsecond)
				}
				time.Sleep(wait)
			}
			cancelErr = ws[calls].Cancel(cctx, "host", turn)
		})
		res, errs := executeAll(ws[:calls], effects, host)
		cancelled.Wait()
		require.NoError(t, cancelErr, "round %d: Cancel", r)

		ended, ok := st.endOf(turn)
		require.True(t, ok, "round %d: no committed cancellation", r)
		require.Equal(t, recovery.TurnCancelled, ended.Status)
		rec, err := st.LoadTurn(ctx, turn)
		require.NoError(t, err)
		aborted, _ := host.abortedOf(turn)
		for i, e := range effects {
			stored, _ := rec.Effect(e.Effect)
			atEnd, _ := ended.Effect(e.Effect)
			switch host.launches(e) {
			case 1:
				require.NoError(t, errs[i], "round %d: Execute %v launched", r, e)
				assert.Equal(t, recovery.EffectCompleted, stored.State, "round %d: %v", r, e)
				assert.Equal(t, string(stored.Result.Data), string(res[i].Data), "round %d: %v returned the stored result", r, e)
				assert.Contains(t, []recovery.EffectState{recovery.EffectAdmitted, recovery.EffectCompleted}, atEnd.State,
					"round %d: %v launched after the cancellation committed", r, e)
				if atEnd.State == recovery.EffectAdmitted {
					assert.Contains(t, aborted, e.Effect, "round %d: %v in flight at the cancel, not aborted", r, e)
				}
				if string(stored.Result.Data) == "aborted:"+e.Effect {
					assert.Contains(t, aborted, e.Effect, "round %d: %v stopped without an abort", r, e)
				}
			case 0:
				assert.Equal(t, refusal.CodeTurnNotRunning, refusal.CodeOf(errs[i]), "round %d: Execute %v not launched: %v", r, e, errs[i])
				assert.Contains(t, []recovery.EffectState{recovery.EffectPending, recovery.EffectClaimed}, stored.State, "round %d: %v", r, e)
				assert.NotContains(t, aborted, e.Effect, "round %d: %v aborted but never launched", r, e)
			default:
				t.Fatalf("round %d: %v launched %d times", r, e, host.launches(e))
			}
		}
		if t.Failed() {
			return
		}
	}
}

// TestRecoveryOnOneConnection runs every path of the store that a
// TurnRecovery takes over a pool of one connection, with a host
// Authorizer that reads the database (on the fence's connection inside
// the fence): concurrent executions of two turns, a tool that fails (the
// needs-reconciliation mark), one that hangs past its call and lease
// (admitted without a result), a Cancel racing them, then Reconcile of
// both (the second passes the admission fence first) and Finish.
func TestRecoveryOnOneConnection(t *testing.T) {
	ctx := t.Context()
	pool := newPool(t, poolOpts{maxConns: 1})
	st, err := NewRecoveryStore(pool, nil)
	require.NoError(t, err)
	host := newPoolHost(20 * time.Millisecond)
	host.fail = map[string]bool{"failing": true}
	host.hang = map[string]bool{"hanging": true}
	const lease = 200 * time.Millisecond
	auth := poolDBAuthorizer{pool: pool}
	ws := make([]*recovery.TurnRecovery, 6)
	for i := range ws {
		ws[i] = recovery.New(recovery.Host{Store: st, Authorizer: auth, Aborter: host},
			&recovery.Options{Worker: "one-" + strconv.Itoa(i), Lease: lease})
	}
	tag := "pool-one-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
	a := recovery.TurnRef{Conversation: tag + "a", Turn: "t"}
	b := recovery.TurnRef{Conversation: tag + "b", Turn: "t"}
	t.Cleanup(func() { _ = host.Abort(context.Background(), a, nil) }) // stops the hanging tool
	_, err = ws[0].Start(ctx, "host", a, []string{"ok", "failing", "hanging"})
	require.NoError(t, err)
	_, err = ws[0].Start(ctx, "host", b, []string{"b0", "b1"})
	require.NoError(t, err)

	effects := []recovery.EffectRef{{Turn: a, Effect: "ok"}, {Turn: a, Effect: "failing"}, {Turn: b, Effect: "b0"}, {Turn: b, Effect: "b1"}}
	var hangErr, cancelErr error
	var side sync.WaitGroup
	side.Go(func() {
		// The hanging tool's call gives up waiting once it launched; its
		// effect stays admitted.
		hanging := recovery.EffectRef{Turn: a, Effect: "hanging"}
		hctx, cancel := context.WithTimeout(context.Background(), poolBound)
		defer cancel()
		go func() {
			for host.launches(hanging) == 0 && hctx.Err() == nil {
				time.Sleep(100 * time.Microsecond)
			}
			cancel()
		}()
		_, hangErr = ws[4].Execute(hctx, "host", hanging, host)
	})
	side.Go(func() {
		cctx, cancel := context.WithTimeout(context.Background(), poolBound)
		defer cancel()
		for host.launchedOf(b) == 0 && cctx.Err() == nil {
			time.Sleep(100 * time.Microsecond)
		}
		cancelErr = ws[5].Cancel(cctx, "host", b)
	})
	res, errs := executeAll(ws[:4], effects, host)
	side.Wait()

	require.NoError(t, errs[0])
	assert.Equal(t, "ran:ok", string(res[0].Data))
	assert.ErrorIs(t, errs[1], errToolFailed)
	assert.Equal(t, refusal.CodeNeedsReconciliation, refusal.CodeOf(errs[1]))
	assert.Equal(t, refusal.CodeNeedsReconciliation, refusal.CodeOf(hangErr), "the hanging call: %v", hangErr)
	require.NoError(t, cancelErr)
	for i, e := range effects[2:] {
		if host.launches(e) == 1 {
			require.NoError(t, errs[2+i], "%v", e)
		} else {
			assert.Equal(t, refusal.CodeTurnNotRunning, refusal.CodeOf(errs[2+i]), "%v: %v", e, errs[2+i])
		}
	}
	rb, err := st.LoadTurn(ctx, b)
	require.NoError(t, err)
	assert.Equal(t, recovery.TurnCancelled, rb.Status)

	ra, err := st.LoadTurn(ctx, a)
	require.NoError(t, err)
	hanging, _ := ra.Effect("hanging")
	require.Equal(t, recovery.EffectAdmitted, hanging.State)
	time.Sleep(time.Until(hanging.LeaseUntil) + time.Millisecond)
	verify := func(_ context.Context, e recovery.EffectRef) (recovery.Result, error) {
		return recovery.Result{Data: []byte("verified:" + e.Effect)}, nil
	}
	for _, id := range []string{"failing", "hanging"} {
		rctx, cancel := context.WithTimeout(ctx, poolBound)
		got, err := ws[0].Reconcile(rctx, "host", recovery.EffectRef{Turn: a, Effect: id}, verify)
		cancel()
		require.NoError(t, err, "Reconcile %s", id)
		assert.Equal(t, "verified:"+id, string(got.Data))
	}
	fctx, cancel := context.WithTimeout(ctx, poolBound)
	defer cancel()
	require.NoError(t, ws[0].Finish(fctx, "host", a, recovery.TurnCompleted))
	ra, err = st.LoadTurn(ctx, a)
	require.NoError(t, err)
	assert.Equal(t, recovery.TurnCompleted, ra.Status)
	for _, e := range ra.Effects {
		assert.Equal(t, recovery.EffectCompleted, e.State, "effect %s", e.ID)
		assert.Equal(t, 1, host.launches(recovery.EffectRef{Turn: a, Effect: e.ID}), "launches of %s", e.ID)
	}
}
