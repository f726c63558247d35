package recovery_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/kit/fakeclock"

	"go.uber.org/goleak"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
)

// Every test of the package runs under goleak: TestMain checks the whole
// run, and leakCheck checks each test on its own.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func leakCheck(t *testing.T) {
	t.Helper()
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

const caller = "alice"

var turn = recovery.TurnRef{Conversation: "c-1", Turn: "t-1"}

func ref(effect string) recovery.EffectRef { return recovery.EffectRef{Turn: turn, Effect: effect} }

func result(s string) recovery.Result { return recovery.Result{Data: []byte(s)} }

// newClock returns the clock of the tests; leases expire when it advances.
func newClock() *fakeclock.Clock {
	return fakeclock.New(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
}

// env is one fake database, one fake host and a clock, over which tests
// open workers, as processes over one database.
type env struct {
	t     *testing.T
	db    *recoverytest.DB
	host  *recoverytest.Host
	clock *fakeclock.Clock
	n     int
}

func newEnv(t *testing.T, hostOpts *recoverytest.HostOptions, dbOpts *recoverytest.DBOptions) *env {
	t.Helper()
	leakCheck(t)
	e := &env{t: t, db: recoverytest.NewDB(dbOpts), host: recoverytest.NewHost(hostOpts), clock: newClock()}
	e.host.Grant(caller, turn)
	return e
}

// worker opens a fresh worker: a new store handle and a new TurnRecovery.
func (e *env) worker() (*recovery.TurnRecovery, *recoverytest.Store) {
	e.n++
	st := e.db.Open(fmt.Sprintf("w%d", e.n))
	rec := recovery.New(recovery.Host{Store: st, Authorizer: e.host, Aborter: e.host},
		&recovery.Options{Worker: st.Worker(), Lease: time.Minute, Now: e.clock.Now})
	return rec, st
}

// started opens a worker and starts the turn with effects a and b.
func (e *env) started() *recovery.TurnRecovery {
	e.t.Helper()
	rec, _ := e.worker()
	_, err := rec.Start(e.t.Context(), caller, turn, []string{"a", "b"})
	if err != nil {
		e.t.Fatalf("Start: %v", err)
	}
	return rec
}

func (e *env) effect(id string) recovery.EffectRecord {
	e.t.Helper()
	rec, ok := e.db.Snapshot(turn)
	if !ok {
		e.t.Fatalf("turn %v not stored", turn)
	}
	eff, ok := rec.Effect(id)
	if !ok {
		e.t.Fatalf("effect %q not stored", id)
	}
	return eff
}

func (e *env) status() recovery.TurnStatus {
	rec, _ := e.db.Snapshot(turn)
	return rec.Status
}

func (e *env) arm(fp recoverytest.Failpoint) {
	e.t.Helper()
	if err := e.db.Arm(fp); err != nil {
		e.t.Fatal(err)
	}
}

// okOutcome ends every execution at once with a result naming its effect.
func okOutcome(effect recovery.EffectRef) (recovery.Result, error) {
	return result("done:" + effect.Effect), nil
}

// verifiedAs is a host lookup that finds s.
func verifiedAs(s string) recovery.VerifyFunc {
	return func(context.Context, recovery.EffectRef) (recovery.Result, error) { return result(s), nil }
}

// background runs Execute in a goroutine; the returned function waits for
// its answer.
func background(ctx context.Context, rec *recovery.TurnRecovery, who string, effect recovery.EffectRef, l recovery.Launcher) func() (recovery.Result, error) {
	type answer struct {
		res recovery.Result
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		res, err := rec.Execute(ctx, who, effect, l)
		ch <- answer{res, err}
	}()
	return func() (recovery.Result, error) {
		a := <-ch
		return a.res, a.err
	}
}
