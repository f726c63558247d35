package recovery_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The deterministic simulation (issue 6). A seeded scheduler runs several
// workers, each a real TurnRecovery with its own handle on one fake
// database, one step at a time: every store call yields to the scheduler
// (through the database's hook), and so do the launch callback and the wait
// for an execution. Between steps the scheduler advances a fake clock, arms
// failpoints, crashes workers (and starts fresh ones), and revokes
// authority. After every step it checks that:
//
//   - no effect launched more than once;
//   - nothing launched after the turn ended, without a committed admission,
//     or after the caller's authority was revoked; no abort hook ran before
//     the cancellation committed;
//   - every result Execute or Reconcile returned equals the stored one, and
//     a result stored by the dispatching worker is what the execution gave;
//   - completed records and ended turns never change, revisions never go
//     back;
//   - no call returned an error without a recovery code, or a code it may
//     not return.
//
// At the end of a seed the recorded store history is checked for
// linearizability with porcupine. A failing seed is printed with the flag
// that replays it with a trace.
var (
	simSeeds = flag.Int("recovery.seeds", defaultSimSeeds, "number of seeds the recovery simulation runs")
	simSeed  = flag.Uint64("recovery.seed", 0, "run only this recovery simulation seed, with a trace")
)

const (
	// defaultSimSeeds is the seed count of go test, also under -race
	// (about 3 s plain and 15 s with the race detector on two cores).
	defaultSimSeeds = 10_000
	simLease        = time.Minute
	simMaxSteps     = 4000
	simMaxWorkers   = 6
	simMaxFailures  = 5
)

var simFailpoints = recoverytest.Failpoints()

func TestSimulation(t *testing.T) {
	leakCheck(t)
	// One P: the scheduler hands control from goroutine to goroutine, which
	// is ten times cheaper when no OS thread has to be woken.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	if *simSeed != 0 {
		s := runSim(*simSeed, true)
		for _, line := range s.trace {
			t.Log(line)
		}
		if len(s.failures) > 0 {
			t.Fatalf("seed %d failed:\n%s", *simSeed, strings.Join(s.failures, "\n"))
		}
		t.Logf("seed %d: %d steps, %d launches, %d history ops: all properties held", *simSeed, s.steps, s.totalLaunches(), s.hist.Len())
		return
	}
	start := time.Now()
	failed, steps, launches := 0, 0, 0
	stats := map[string]int{}
	for seed := uint64(1); seed <= uint64(*simSeeds); seed++ {
		s := runSim(seed, false)
		steps += s.steps
		launches += s.totalLaunches()
		for k, v := range s.stats {
			stats[k] += v
		}
		if len(s.failures) > 0 {
			failed++
			if failed <= simMaxFailures {
				t.Errorf("seed %d failed: %s\n  replay: go test ./recovery -run 'TestSimulation$' -v -recovery.seed=%d",
					seed, strings.Join(s.failures, "; "), seed)
			}
		}
	}
	if launches == 0 {
		t.Fatal("the simulation launched nothing: it proves nothing")
	}
	t.Logf("%d seeds, %d steps, %d launches, %d failed, in %v", *simSeeds, steps, launches, failed, time.Since(start).Round(time.Millisecond))
	keys := slices.Sorted(maps.Keys(stats))
	for _, k := range keys {
		t.Logf("  %-40s %d", k, stats[k])
	}
	for _, k := range []string{"crash", "failpoint fired", "abort with effects in flight", "effect reconciled", "Execute -> ok", "Execute -> needs-reconciliation"} {
		if stats[k] == 0 && *simSeeds >= 1000 {
			t.Errorf("the simulation never exercised %q", k)
		}
	}
}

// codeName names an outcome for the statistics.
func codeName(err error) string {
	if err == nil {
		return "ok"
	}
	if c := refusal.CodeOf(err); c != "" {
		return string(c)
	}
	return "uncoded"
}

// sim is one seeded run. Only one goroutine, the scheduler or the one
// worker it resumed, touches it at a time: the handoff over park and
// resume orders every access.
type sim struct {
	seed     uint64
	rng      *rand.Rand
	tracing  bool
	trace    []string
	failures []string

	ctx      context.Context
	cancel   context.CancelFunc
	db       *recoverytest.DB
	hist     *recoverytest.History
	clock    time.Time
	effects  []string
	workers  []*simWorker
	byName   map[string]*simWorker
	spawned  int
	park     chan *simWorker
	steps    int
	draining bool

	launches map[string]int
	reported map[string]bool // effects already reported as launched twice
	execs    map[string]*simExec
	aborted  bool
	revoked  bool
	prev     *recovery.TurnRecord
	returned []simReturn
	stats    map[string]int // what the seed exercised, summed over seeds
}

type simWorker struct {
	name   string
	rec    *recovery.TurnRecovery
	store  *recoverytest.Store
	resume chan struct{}
	ready  func() bool
	done   bool
	ops    int
}

type simExec struct {
	effect  string
	outcome recovery.Result
	unknown bool // the execution's outcome is unknown to its waiter
	done    bool
	aborted bool
}

type simReturn struct {
	who    string
	effect string
	res    recovery.Result
}

func runSim(seed uint64, tracing bool) *sim { return runBrokenSim(seed, tracing, recoverytest.Sound) }

// runBrokenSim runs a seed over a store broken as broken says.
func runBrokenSim(seed uint64, tracing bool, broken recoverytest.Broken) *sim {
	ctx, cancel := context.WithCancel(context.Background())
	s := &sim{
		seed: seed, rng: rand.New(rand.NewPCG(seed, 0x5eed)), tracing: tracing,
		ctx: ctx, cancel: cancel, hist: recoverytest.NewHistory(),
		clock:    time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		byName:   map[string]*simWorker{},
		park:     make(chan *simWorker),
		launches: map[string]int{},
		reported: map[string]bool{},
		stats:    map[string]int{},
		execs:    map[string]*simExec{},
	}
	defer cancel()
	s.db = recoverytest.NewDB(&recoverytest.DBOptions{Hook: s.hook, Broken: broken})
	for i := range 1 + s.rng.IntN(3) {
		s.effects = append(s.effects, fmt.Sprintf("e%d", i))
	}
	for range 2 + s.rng.IntN(2) {
		s.spawn()
	}
	s.schedule()
	for _, fp := range simFailpoints {
		s.stats["failpoint fired"] += s.db.Hits(fp)
	}
	if snap, ok := s.db.Snapshot(turn); ok {
		s.stats["turn "+string(snap.Status)]++
		for _, e := range snap.Effects {
			s.stats["effect "+string(e.State)]++
			if e.Reconciled {
				s.stats["effect reconciled"]++
			}
		}
	}
	if err := s.hist.CheckLinearizable(time.Minute); err != nil {
		s.fail("%v", err)
	}
	return s
}

func (s *sim) logf(format string, args ...any) {
	if s.tracing {
		s.trace = append(s.trace, fmt.Sprintf("[%4d] ", s.steps)+fmt.Sprintf(format, args...))
	}
}

func (s *sim) fail(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.failures = append(s.failures, fmt.Sprintf("step %d: %s", s.steps, msg))
	s.logf("FAILURE: %s", msg)
}

func (s *sim) totalLaunches() int {
	n := 0
	for _, c := range s.launches {
		n += c
	}
	return n
}

// spawn starts a fresh worker: a new process with its own handle.
func (s *sim) spawn() {
	s.spawned++
	w := &simWorker{name: fmt.Sprintf("w%d", s.spawned), resume: make(chan struct{})}
	w.store = s.db.Open(w.name)
	var st recovery.Store = s.hist.Wrap(w.store, s.spawned)
	if s.seed%2 == 1 {
		st = recoverytest.Dispatching(st) // Execute's Dispatcher path
	}
	w.rec = recovery.New(recovery.Host{
		Store:      st,
		Authorizer: simAuthorizer{s},
		Aborter:    simAborter{s},
	}, &recovery.Options{Worker: w.name, Lease: simLease, Now: func() time.Time { return s.clock }})
	s.workers = append(s.workers, w)
	s.byName[w.name] = w
	s.logf("spawn %s", w.name)
	go s.work(w)
}

// schedule runs the seed to its end.
func (s *sim) schedule() {
	for {
		var live, ready []*simWorker
		for _, w := range s.workers {
			if !w.done {
				live = append(live, w)
				if w.ready == nil || s.draining || w.ready() {
					ready = append(ready, w)
				}
			}
		}
		if len(live) == 0 {
			return
		}
		s.steps++
		switch {
		case s.steps > simMaxSteps && !s.draining:
			s.fail("no progress after %d steps", simMaxSteps)
			s.drain()
			continue
		case len(ready) == 0:
			s.fail("deadlock: every live worker waits")
			s.drain()
			continue
		}
		if !s.draining {
			s.environment()
		}
		w := ready[s.rng.IntN(len(ready))]
		w.ready = nil
		w.resume <- struct{}{}
		if got := <-s.park; got != w {
			s.fail("scheduler handoff broken: resumed %s, %s parked", w.name, got.name)
		}
		s.check()
	}
}

// drain ends the seed: contexts end, executions finish, nothing new starts.
func (s *sim) drain() {
	s.draining = true
	s.cancel()
}

// environment perturbs the world between steps.
func (s *sim) environment() {
	switch r := s.rng.IntN(100); {
	case r < 6:
		d := time.Duration(s.rng.IntN(90)) * time.Second
		s.clock = s.clock.Add(d)
		s.logf("clock +%v", d)
	case r < 10:
		fp := simFailpoints[s.rng.IntN(len(simFailpoints))]
		_ = s.db.Arm(fp)
		s.logf("arm %s", fp)
	case r < 12:
		var alive []*simWorker
		for _, w := range s.workers {
			if !w.done && !w.store.Crashed() {
				alive = append(alive, w)
			}
		}
		if len(alive) > 0 {
			w := alive[s.rng.IntN(len(alive))]
			w.store.Crash()
			s.stats["crash"]++
			s.logf("crash %s", w.name)
		}
	case r == 12 && s.rng.IntN(4) == 0 && !s.db.FenceHeld(turn):
		// The host fences revocation like cancellation (it takes the same
		// lock), so a revocation never lands between the recheck inside
		// AdmitDispatch and the launch.
		s.revoked = true
		s.logf("revoke authority")
	}
	alive := 0
	for _, w := range s.workers {
		if !w.done && !w.store.Crashed() {
			alive++
		}
	}
	if alive < 2 && s.spawned < simMaxWorkers {
		s.spawn()
	}
}

// yield parks the calling worker until the scheduler resumes it; ready,
// if set, tells the scheduler when it may.
func (s *sim) yield(w *simWorker, ready func() bool) {
	w.ready = ready
	s.park <- w
	<-w.resume
}

// hook is the database hook: every store call is a step. Calls that take
// the fence wait until it is free, so no worker ever blocks unseen.
func (s *sim) hook(c recoverytest.Call) {
	w := s.byName[c.Worker]
	var ready func() bool
	if c.Op == recoverytest.OpAdmit || c.Op == recoverytest.OpEnd {
		ready = func() bool { return !s.db.FenceHeld(c.Turn) }
	}
	s.yield(w, ready)
}

// work is a worker's life: start the turn, then random operations until
// its budget is spent, it crashes or the seed drains.
func (s *sim) work(w *simWorker) {
	<-w.resume
	defer func() {
		w.done = true
		s.park <- w
	}()
	_, err := w.rec.Start(s.ctx, caller, turn, s.effects)
	s.expect(w, "Start", err, refusal.ErrClaimConflict, refusal.ErrCheckpointWriteFailed, refusal.ErrNeedsReconciliation, refusal.ErrStoreUnavailable, refusal.ErrUnauthorized)
	budget := 4 + s.rng.IntN(8)
	for ; w.ops < budget && !w.store.Crashed() && !s.draining; w.ops++ {
		effect := s.effects[s.rng.IntN(len(s.effects))]
		switch r := s.rng.IntN(100); {
		case r < 75:
			res, err := w.rec.Execute(s.ctx, caller, ref(effect), simLauncher{s, w})
			s.logf("%s: Execute(%s) = %q, %v", w.name, effect, res.Data, err)
			s.stats["Execute -> "+codeName(err)]++
			if err == nil {
				s.returned = append(s.returned, simReturn{w.name, effect, res})
			}
			s.expect(w, "Execute", err, refusal.ErrTurnNotRunning, refusal.ErrClaimConflict, refusal.ErrNeedsReconciliation,
				refusal.ErrCheckpointWriteFailed, refusal.ErrUnauthorized, refusal.ErrStoreUnavailable)
		case r < 87:
			s.reconcile(w, effect)
		case r < 93:
			err := w.rec.Cancel(s.ctx, caller, turn)
			s.logf("%s: Cancel = %v", w.name, err)
			s.expect(w, "Cancel", err, refusal.ErrTurnNotRunning, refusal.ErrNeedsReconciliation,
				refusal.ErrCheckpointWriteFailed, refusal.ErrUnauthorized, refusal.ErrStoreUnavailable)
		case r < 95:
			err := w.rec.Finish(s.ctx, caller, turn, recovery.TurnCompleted)
			s.logf("%s: Finish = %v", w.name, err)
			s.expect(w, "Finish", err, refusal.ErrTurnNotRunning, refusal.ErrNeedsReconciliation,
				refusal.ErrCheckpointWriteFailed, refusal.ErrUnauthorized, refusal.ErrStoreUnavailable)
		default:
			_, err := w.rec.Load(s.ctx, caller, turn)
			s.expect(w, "Load", err, refusal.ErrStoreUnavailable, refusal.ErrUnauthorized, refusal.ErrTurnNotRunning)
		}
	}
}

// reconcile plays the host's reconciler: its lookup reports what really
// happened to the effect when Reconcile asks (after the fence barrier).
func (s *sim) reconcile(w *simWorker, effect string) {
	// The host's reconciler scans for unknown outcomes; rarely it also
	// settles an effect that never started.
	snap, _ := s.db.Snapshot(turn)
	if e, _ := snap.Effect(effect); e.State == recovery.EffectPending && s.rng.IntN(10) != 0 {
		return
	}
	var verified recovery.Result
	verify := func(context.Context, recovery.EffectRef) (recovery.Result, error) {
		verified = result("not-performed:" + effect)
		if ex, ok := s.execs[effect]; ok {
			verified = ex.outcome
		}
		return verified, nil
	}
	res, err := w.rec.Reconcile(s.ctx, caller, ref(effect), verify)
	s.logf("%s: Reconcile(%s) verified %q = %q, %v", w.name, effect, verified.Data, res.Data, err)
	if err == nil {
		s.returned = append(s.returned, simReturn{w.name, effect, res})
		snap, _ := s.db.Snapshot(turn)
		eff, _ := snap.Effect(effect)
		if ex, ran := s.execs[effect]; ran && eff.Reconciled && !eff.Result.Equal(ex.outcome) {
			s.fail("%s reconciled %s as %q, but it ran and gave %q", w.name, effect, eff.Result.Data, ex.outcome.Data)
		}
	}
	s.expect(w, "Reconcile", err, refusal.ErrClaimConflict, refusal.ErrNeedsReconciliation, refusal.ErrTurnNotRunning,
		refusal.ErrCheckpointWriteFailed, refusal.ErrUnauthorized, refusal.ErrStoreUnavailable)
}

// expect checks that err is nil or one of the allowed refusals; a crashed
// worker or a drained seed may see anything.
func (s *sim) expect(w *simWorker, op string, err error, allowed ...error) {
	if err == nil || w.store.Crashed() || s.draining {
		return
	}
	for _, a := range allowed {
		if errors.Is(err, a) {
			return
		}
	}
	s.fail("%s: %s returned %v (code %q), which it may not", w.name, op, err, refusal.CodeOf(err))
}

// check runs after every step, while every worker is parked.
func (s *sim) check() {
	for _, effect := range s.effects {
		if n := s.launches[effect]; n > 1 && !s.reported[effect] {
			s.reported[effect] = true
			s.fail("effect %s launched %d times", effect, n)
		}
	}
	cur, ok := s.db.Snapshot(turn)
	if !ok {
		return
	}
	for _, r := range s.returned {
		e, _ := cur.Effect(r.effect)
		if e.State != recovery.EffectCompleted || !e.Result.Equal(r.res) {
			s.fail("%s got %q for %s, but the store holds %q (%s)", r.who, r.res.Data, r.effect, e.Result.Data, e.State)
		}
	}
	s.returned = s.returned[:0]
	for _, e := range cur.Effects {
		if ex, ok := s.execs[e.ID]; ok && e.State == recovery.EffectCompleted && !e.Reconciled && !e.Result.Equal(ex.outcome) {
			s.fail("effect %s stored %q, but its execution gave %q", e.ID, e.Result.Data, ex.outcome.Data)
		}
		if e.State == recovery.EffectCompleted && !e.Reconciled && !slices.Contains(s.knownLaunched(), e.ID) {
			s.fail("effect %s completed by a worker without a launch", e.ID)
		}
	}
	if s.prev != nil {
		if s.prev.Status.Terminal() && cur.Status != s.prev.Status {
			s.fail("ended turn changed from %s to %s", s.prev.Status, cur.Status)
		}
		for i, p := range s.prev.Effects {
			c := cur.Effects[i]
			if p.State == recovery.EffectCompleted && !p.Equal(c) {
				s.fail("completed record of %s changed: %+v -> %+v", p.ID, p, c)
			}
			if c.Revision < p.Revision {
				s.fail("revision of %s went back from %d to %d", p.ID, p.Revision, c.Revision)
			}
		}
	}
	s.prev = &cur
}

func (s *sim) knownLaunched() []string {
	var ids []string
	for id, n := range s.launches {
		if n > 0 {
			ids = append(ids, id)
		}
	}
	return ids
}

type simAuthorizer struct{ s *sim }

func (a simAuthorizer) Authorize(context.Context, string, recovery.TurnRef, recovery.Action) error {
	if a.s.revoked {
		return refusal.ErrUnauthorized
	}
	return nil
}

type simAborter struct{ s *sim }

// Abort checks that the cancellation committed first, then aborts every
// execution of the turn and remembers the turn for late launches.
func (a simAborter) Abort(_ context.Context, _ recovery.TurnRef, inFlight []string) error {
	s := a.s
	if snap, _ := s.db.Snapshot(turn); snap.Status != recovery.TurnCancelled {
		s.fail("abort hook ran before the cancellation committed (status %s)", snap.Status)
	}
	s.aborted = true
	if len(inFlight) > 0 {
		s.stats["abort with effects in flight"]++
	}
	for _, ex := range s.execs {
		if !ex.done {
			ex.aborted = true
		}
	}
	s.logf("abort %v", inFlight)
	return nil
}

type simLauncher struct {
	s *sim
	w *simWorker
}

// Launch records and checks the launch, then yields while the fence is
// held, so that other workers run (and must wait) meanwhile.
func (l simLauncher) Launch(_ context.Context, effect recovery.EffectRef) (recovery.Execution, error) {
	s := l.s
	s.launches[effect.Effect]++
	snap, _ := s.db.Snapshot(turn)
	e, _ := snap.Effect(effect.Effect)
	switch {
	case snap.Status != recovery.TurnRunning:
		s.fail("%s launched %s after the turn ended (%s)", l.w.name, effect.Effect, snap.Status)
	case e.State != recovery.EffectAdmitted:
		s.fail("%s launched %s without a committed admission (%s)", l.w.name, effect.Effect, e.State)
	case s.revoked:
		s.fail("%s launched %s after authority was revoked", l.w.name, effect.Effect)
	}
	ex := &simExec{effect: effect.Effect, outcome: result(fmt.Sprintf("out:%s:%d", effect.Effect, s.seed)), aborted: s.aborted}
	ex.unknown = s.rng.IntN(10) == 0
	s.execs[effect.Effect] = ex
	s.logf("%s: launch %s", l.w.name, effect.Effect)
	s.yield(l.w, nil)
	if s.rng.IntN(20) == 0 {
		return nil, errors.New("sim: launch error, outcome unknown")
	}
	return simWait{l, ex}, nil
}

type simWait struct {
	l  simLauncher
	ex *simExec
}

// Wait yields until the scheduler's coin says the execution ended.
func (sw simWait) Wait(ctx context.Context) (recovery.Result, error) {
	s, ex := sw.l.s, sw.ex
	for {
		switch {
		case ex.aborted:
			return recovery.Result{}, recoverytest.ErrAborted
		case ex.done || s.draining:
			ex.done = true
			if ex.unknown {
				return recovery.Result{}, errors.New("sim: execution outcome unknown")
			}
			return ex.outcome, nil
		}
		s.yield(sw.l.w, nil)
		if ctx.Err() != nil {
			return recovery.Result{}, ctx.Err()
		}
		ex.done = s.rng.IntN(3) == 0
	}
}

// TestSimulationCatchesBrokenStores runs the simulation over the
// known-broken stores that it can expose: each must fail within a few
// hundred seeds. (A store that swallows lost acknowledgements is caught by
// recoverytest's suite: the fake applies such writes, so the damage needs a
// real database to show.)
func TestSimulationCatchesBrokenStores(t *testing.T) {
	leakCheck(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, broken := range []recoverytest.Broken{recoverytest.BrokenIgnoresRevision, recoverytest.BrokenUnfenced} {
		t.Run(broken.String(), func(t *testing.T) {
			for seed := uint64(1); seed <= 2000; seed++ {
				if s := runBrokenSim(seed, false, broken); len(s.failures) > 0 {
					t.Logf("seed %d exposes %s: %s", seed, broken, s.failures[0])
					return
				}
			}
			t.Fatalf("2000 seeds did not expose the %s store", broken)
		})
	}
}
