//go:build unix

package pgstore

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
)

// The environment of a worker process of TestKill9: this test binary,
// re-executed with workerEnv set, runs workerMain instead of the tests.
const (
	workerEnv    = "PGSTORE_WORKER"      // the worker's boot id, unique per process
	workerDSN    = "PGSTORE_WORKER_DSN"  // the database
	workerSink   = "PGSTORE_WORKER_SINK" // the side-effect sink, a file outside the database
	workerTurns  = "PGSTORE_WORKER_TURNS"
	workerKillAt = "PGSTORE_WORKER_KILL_AT" // a failpoint at which the worker kills itself
)

// killEffects are the effects of every turn of TestKill9. Launching "e3"
// writes the sink and then fails, as a host that cannot tell whether the
// call went out: it leaves the effect needing reconciliation.
var killEffects = []string{"e0", "e1", "e2", "e3"}

// killTurn names turn i of TestKill9; every fifth turn is cancelled after
// its first effect, the others finish.
func killTurn(i int) (recovery.TurnRef, int) {
	cancelAfter := -1
	if i%5 == 0 {
		cancelAfter = 1
	}
	return recovery.TurnRef{Conversation: "kill-" + strconv.Itoa(i), Turn: "t"}, cancelAfter
}

// sinkKey is how an effect is written in the sink, one line per launch.
func sinkKey(e recovery.EffectRef) string {
	return e.Turn.Conversation + "|" + e.Turn.Turn + "|" + e.Effect
}

// readSink counts launches per effect key. A line cut short by a kill
// still counts: a launch that started is a launch.
func readSink(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[string]int{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n := map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, _, _ := strings.Cut(sc.Text(), "#")
		n[key]++
	}
	return n, sc.Err()
}

// sinkLauncher is the worker's recovery.Launcher: the side effect is one
// line appended to the sink, O_APPEND and fsync, before Launch returns.
type sinkLauncher struct {
	f    *os.File
	boot string
	kill func(point string)
}

func (l *sinkLauncher) Launch(_ context.Context, e recovery.EffectRef) (recovery.Execution, error) {
	if _, err := l.f.WriteString(sinkKey(e) + "#" + l.boot + "\n"); err != nil {
		return nil, err
	}
	if err := l.f.Sync(); err != nil {
		return nil, err
	}
	l.kill("launch.after")
	if e.Effect == "e3" {
		return nil, fmt.Errorf("the host lost the response of %s", e.Effect)
	}
	return doneExec{recovery.Result{Data: []byte("ran:" + e.Effect)}}, nil
}

// killStore wraps the worker's store and kills the process with SIGKILL
// at one named failpoint: before a write is sent, or after it committed
// (its acknowledgement then dies with the process).
type killStore struct {
	*RecoveryStore
	kill func(point string)
}

func (k *killStore) around(site recoverytest.Site, write func() error) error {
	k.kill(string(recoverytest.Name(site, recoverytest.ModeBefore)))
	err := write()
	if err == nil {
		k.kill(string(recoverytest.Name(site, recoverytest.ModeAfter)))
	}
	return err
}

func (k *killStore) CreateTurn(ctx context.Context, rec recovery.TurnRecord) error {
	return k.around(recoverytest.SiteStart, func() error { return k.RecoveryStore.CreateTurn(ctx, rec) })
}

func (k *killStore) CompareAndSwapEffect(ctx context.Context, turn recovery.TurnRef, expected uint64, next recovery.EffectRecord) error {
	return k.around(siteOf(write{op: "cas", next: &next}), func() error {
		return k.RecoveryStore.CompareAndSwapEffect(ctx, turn, expected, next)
	})
}

func (k *killStore) EndTurn(ctx context.Context, turn recovery.TurnRef, status recovery.TurnStatus) (recovery.TurnRecord, error) {
	var rec recovery.TurnRecord
	err := k.around(siteOf(write{op: "end", end: status}), func() error {
		var err error
		rec, err = k.RecoveryStore.EndTurn(ctx, turn, status)
		return err
	})
	return rec, err
}

func (k *killStore) AdmitDispatch(ctx context.Context, adm recovery.Admission, launch recovery.DispatchFunc) error {
	k.kill(string(recoverytest.Name(recoverytest.SiteAdmit, recoverytest.ModeBefore)))
	return k.RecoveryStore.AdmitDispatch(ctx, adm, func(lctx context.Context) error {
		k.kill(string(recoverytest.Name(recoverytest.SiteAdmit, recoverytest.ModeAfter))) // committed, not launched
		return launch(lctx)
	})
}

// ClaimEffect is the claim of the fast path, with the claim's failpoints
// around it; the fence it hands out has the admission's and the
// completion's.
func (k *killStore) ClaimEffect(ctx context.Context, c recovery.Claim) (recovery.ClaimResult, error) {
	var out recovery.ClaimResult
	err := k.around(recoverytest.SiteClaim, func() error {
		var err error
		out, err = k.RecoveryStore.ClaimEffect(ctx, c)
		return err
	})
	if out.Fence != nil {
		out.Fence = &killFence{DispatchFence: out.Fence, k: k}
	}
	return out, err
}

// killFence is a dispatch fence with the failpoints of killStore.
type killFence struct {
	recovery.DispatchFence
	k *killStore
}

func (f *killFence) AdmitDispatch(ctx context.Context, adm recovery.Admission, launch recovery.DispatchFunc) error {
	f.k.kill(string(recoverytest.Name(recoverytest.SiteAdmit, recoverytest.ModeBefore)))
	return f.DispatchFence.AdmitDispatch(ctx, adm, func(lctx context.Context) error {
		f.k.kill(string(recoverytest.Name(recoverytest.SiteAdmit, recoverytest.ModeAfter)))
		return launch(lctx)
	})
}

func (f *killFence) Complete(ctx context.Context, expected uint64, next recovery.EffectRecord) error {
	return f.k.around(siteOf(write{op: "cas", next: &next}), func() error {
		return f.DispatchFence.Complete(ctx, expected, next)
	})
}

// workerMain is a worker process: it drives the turns named in its
// environment, four at a time, and exits 0 when all are done. It keeps
// nothing in memory across restarts: whatever it finds in the database
// and the sink is all it knows.
func workerMain() int {
	boot := os.Getenv(workerEnv)
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "worker %s: %v\n", boot, err)
		return 3
	}
	from, to, _ := strings.Cut(os.Getenv(workerTurns), "-")
	lo, err1 := strconv.Atoi(from)
	hi, err2 := strconv.Atoi(to)
	if err1 != nil || err2 != nil {
		return fail(fmt.Errorf("bad %s", workerTurns))
	}
	killAt := os.Getenv(workerKillAt)
	kill := func(point string) {
		if point == killAt {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}
	ctx := context.Background()
	pool, err := pxPool(ctx, os.Getenv(workerDSN))
	if err != nil {
		return fail(err)
	}
	defer pool.Close()
	sink, err := os.OpenFile(os.Getenv(workerSink), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fail(err)
	}
	defer sink.Close()
	st, err := NewRecoveryStore(pool, nil)
	if err != nil {
		return fail(err)
	}
	const lease = 50 * time.Millisecond
	rec := recovery.New(recovery.Host{Store: &killStore{RecoveryStore: st, kill: kill}, Authorizer: allowAll{}},
		&recovery.Options{Worker: "w-" + boot, Lease: lease})
	launched := func(e recovery.EffectRef) int {
		n, err := readSink(sink.Name())
		if err != nil {
			return 1 // unknown: never claim it did not run
		}
		return n[sinkKey(e)]
	}
	d := &driver{rec: rec, launcher: &sinkLauncher{f: sink, boot: boot, kill: kill}, launched: launched, pause: lease, attempts: 200}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for g := range 4 {
		wg.Go(func() {
			for i := lo + g; i < hi; i += 4 {
				turn, cancelAfter := killTurn(i)
				if err := d.turn(ctx, turn, killEffects, cancelAfter); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if len(errs) > 0 {
		return fail(errs[0])
	}
	return 0
}

func pxPool(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 8
	return pgxpool.NewWithConfig(ctx, cfg)
}
