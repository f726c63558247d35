//go:build unix

package pgstore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The environment of the processes of TestCrossInstanceCancel: this test
// binary, re-executed with abortRoleEnv set, runs abortMain.
const (
	abortRoleEnv = "PGSTORE_ABORT_ROLE" // "runner" or "canceller"
	abortDSNEnv  = "PGSTORE_ABORT_DSN"
)

func abortTurn(i int) recovery.TurnRef {
	return recovery.TurnRef{Conversation: "xcancel-" + strconv.Itoa(i), Turn: "t"}
}

// abortMain is one process of TestCrossInstanceCancel. It reads commands
// from stdin, one a line, and reports on stdout, one event a line:
//
//	runner:    "run I"    -> "launch I EFFECT NANOS" per launch, "aborted I NANOS", "after I CODE"
//	canceller: "cancel I" -> "cancelled I BEFORE AFTER CODE"
//
// The runner also reports "listening N" each time its AbortListener is
// listening (N: connections so far).
func abortMain() int {
	ctx := context.Background()
	pool, err := pxPool(ctx, os.Getenv(abortDSNEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer pool.Close()
	st, err := NewRecoveryStore(pool, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Printf(format+"\n", args...)
	}
	in := bufio.NewScanner(os.Stdin)
	if os.Getenv(abortRoleEnv) == "canceller" {
		rec := recovery.New(recovery.Host{Store: st, Authorizer: allowAll{}}, nil)
		if err := pool.Ping(ctx); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		say("ready")
		for in.Scan() {
			i, _ := strconv.Atoi(strings.TrimPrefix(in.Text(), "cancel "))
			before := time.Now().UnixNano()
			err := rec.Cancel(ctx, "host", abortTurn(i))
			say("cancelled %d %d %d %s", i, before, time.Now().UnixNano(), codeName(err))
		}
		return 0
	}
	host := &abortHost{cancels: map[recovery.TurnRef]context.CancelFunc{}, say: say}
	l, err := NewAbortListener(pool.Config().ConnConfig, st, host, &AbortListenerOptions{
		RetryDelay: 20 * time.Millisecond,
		Logger:     slog.New(slog.DiscardHandler),
		OnListen:   func() { say("listening %d", 0) },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = l.Run(lctx) }()
	rec := recovery.New(recovery.Host{Store: st, Authorizer: allowAll{}, Aborter: host}, nil)
	launcher := l.Launcher(host)
	var wg sync.WaitGroup
	for in.Scan() {
		i, _ := strconv.Atoi(strings.TrimPrefix(in.Text(), "run "))
		turn := abortTurn(i)
		if _, err := rec.Start(ctx, "host", turn, []string{"long", "after"}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		wg.Go(func() {
			_, _ = rec.Execute(ctx, "host", recovery.EffectRef{Turn: turn, Effect: "long"}, launcher)
			// The long tool ended (aborted): nothing of the turn launches
			// any more.
			_, err := rec.Execute(ctx, "host", recovery.EffectRef{Turn: turn, Effect: "after"}, launcher)
			say("after %d %s", i, codeName(err))
		})
	}
	wg.Wait()
	return 0
}

func codeName(err error) string {
	if err == nil {
		return "ok"
	}
	if c := refusal.CodeOf(err); c != "" {
		return string(c)
	}
	return "error"
}

// abortHost is the runner's Launcher and Aborter: a launched tool runs
// until the turn is aborted.
type abortHost struct {
	mu      sync.Mutex
	cancels map[recovery.TurnRef]context.CancelFunc
	aborted map[recovery.TurnRef]bool
	say     func(string, ...any)
}

func turnIndex(turn recovery.TurnRef) int {
	i, _ := strconv.Atoi(strings.TrimPrefix(turn.Conversation, "xcancel-"))
	return i
}

func (h *abortHost) Launch(_ context.Context, e recovery.EffectRef) (recovery.Execution, error) {
	h.say("launch %d %s %d", turnIndex(e.Turn), e.Effect, time.Now().UnixNano())
	ctx, cancel := context.WithCancel(context.Background())
	h.mu.Lock()
	h.cancels[e.Turn] = cancel
	h.mu.Unlock()
	return ctxExec{ctx}, nil
}

func (h *abortHost) Abort(_ context.Context, turn recovery.TurnRef, _ []string) error {
	now := time.Now().UnixNano()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.aborted == nil {
		h.aborted = map[recovery.TurnRef]bool{}
	}
	if cancel := h.cancels[turn]; cancel != nil && !h.aborted[turn] {
		h.aborted[turn] = true
		// Said before the tool ends: once it has, the runner goes on to
		// the turn's next effect and says "after", which must come second.
		h.say("aborted %d %d", turnIndex(turn), now)
		cancel()
	}
	return nil
}

// ctxExec is a long tool: it ends when its context is cancelled.
type ctxExec struct{ ctx context.Context }

func (e ctxExec) Wait(ctx context.Context) (recovery.Result, error) {
	select {
	case <-e.ctx.Done():
		return recovery.Result{}, fmt.Errorf("aborted: %w", e.ctx.Err())
	case <-ctx.Done():
		return recovery.Result{}, ctx.Err()
	}
}

// proc is a child process of TestCrossInstanceCancel with its event lines.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	events chan []string
}

func startProc(t *testing.T, role, app string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), abortRoleEnv+"="+role, abortDSNEnv+"="+testDSN+"&application_name="+app)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	p := &proc{cmd: cmd, stdin: stdin, events: make(chan []string, 1024)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.events <- strings.Fields(sc.Text())
		}
		close(p.events)
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return p
}

func (p *proc) send(t *testing.T, line string) {
	t.Helper()
	_, err := io.WriteString(p.stdin, line+"\n")
	require.NoError(t, err)
}

// expect returns the next event of kind, failing after 10 s; events of
// other kinds are handed to other (when not nil).
func (p *proc) expect(t *testing.T, kind string, other func([]string)) []string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-p.events:
			require.True(t, ok, "the process ended while %q was awaited", kind)
			if len(ev) > 0 && ev[0] == kind {
				return ev
			}
			if other != nil && len(ev) > 0 && ev[0] != "listening" {
				other(ev)
			}
		case <-timeout:
			// The child's goroutines, on its stderr, say where it waits.
			_ = p.cmd.Process.Signal(syscall.SIGQUIT)
			time.Sleep(500 * time.Millisecond)
			t.Fatalf("no %q event within 10 s", kind)
		}
	}
}

func nanos(s string) time.Time {
	n, _ := strconv.ParseInt(s, 10, 64)
	return time.Unix(0, n)
}

// TestCrossInstanceCancel runs a long tool in one worker process and
// cancels its turn from another: the runner's AbortListener aborts it,
// only after the cancellation committed, and nothing of the turn launches
// after the commit. It measures the abort latency, from the start of the
// canceller's Cancel to the runner's abort hook (p50, p99), with the
// listener's connection up, with it cut right before the cancellation
// (the catch-up read after the reconnection aborts), and with the
// canceller killed with SIGKILL at a random moment of its Cancel (the
// abort happens if and only if the cancellation committed).
func TestCrossInstanceCancel(t *testing.T) {
	needDB(t)
	runner := startProc(t, "runner", "xcancel-runner")
	canceller := startProc(t, "canceller", "xcancel-canceller")
	runner.expect(t, "listening", nil)
	canceller.expect(t, "ready", nil)
	admin := newPool(t, poolOpts{})
	ctx := t.Context()
	next := 0
	// launchAndCancel runs the long tool of a new turn and cancels it
	// through the canceller; cut first terminates the listener's session.
	launchAndCancel := func(cut bool) (latency time.Duration) {
		t.Helper()
		i := next
		next++
		runner.send(t, "run "+strconv.Itoa(i))
		var launches []time.Time
		onLaunch := func(ev []string) {
			if ev[0] == "launch" {
				assert.Equal(t, "long", ev[2], "only the long tool launches")
				launches = append(launches, nanos(ev[3]))
			}
		}
		ev := runner.expect(t, "launch", nil)
		require.Equal(t, strconv.Itoa(i), ev[1])
		launches = append(launches, nanos(ev[3]))
		if cut {
			var n int
			require.NoError(t, admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE application_name = 'pgstore-abort-listener' AND datname = current_database()`).Scan(&n))
			require.Equal(t, 1, n, "one listening connection per process")
		}
		canceller.send(t, "cancel "+strconv.Itoa(i))
		c := canceller.expect(t, "cancelled", nil)
		require.Equal(t, "ok", c[4])
		committedBy := nanos(c[3])
		ab := runner.expect(t, "aborted", onLaunch)
		require.Equal(t, strconv.Itoa(i), ab[1])
		after := runner.expect(t, "after", onLaunch)
		assert.Equal(t, string(refusal.CodeTurnNotRunning), after[2], "the effect after the cancellation is refused")
		for _, at := range launches {
			assert.True(t, at.Before(committedBy), "a launch at %v, after the cancellation's commit (by %v)", at, committedBy)
		}
		assert.Len(t, launches, 1)
		return nanos(ab[2]).Sub(nanos(c[2]))
	}

	report := func(name string, lat []time.Duration) {
		slices.Sort(lat)
		p := func(q float64) time.Duration { return lat[min(len(lat)-1, int(q*float64(len(lat))))] }
		t.Logf("abort latency %s over %d cancellations: p50 %v, p99 %v, max %v", name, len(lat), p(0.50), p(0.99), lat[len(lat)-1])
	}
	var up, cut []time.Duration
	for range *flagCancels {
		up = append(up, launchAndCancel(false))
	}
	report("(listener up)", up)
	listeners := func() int {
		var n int
		require.NoError(t, admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = 'pgstore-abort-listener' AND datname = current_database()`).Scan(&n))
		return n
	}
	for range max(3, *flagCancels/4) {
		cut = append(cut, launchAndCancel(true))
		require.Eventually(t, func() bool { return listeners() == 1 }, 10*time.Second, 5*time.Millisecond, "the listener reconnects")
	}
	report("(listener's connection cut before the cancellation)", cut)

	// The canceller is killed at a random moment of its Cancel: the tool
	// is aborted if and only if the cancellation committed.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 15))
	st := newRecoveryStore(t, poolOpts{})
	finisher := recovery.New(recovery.Host{Store: st, Authorizer: allowAll{}}, nil)
	var committed, notCommitted int
	for range max(3, *flagCancels/4) {
		i := next
		next++
		runner.send(t, "run "+strconv.Itoa(i))
		runner.expect(t, "launch", nil)
		app := "xcancel-victim-" + strconv.Itoa(i)
		victim := startProc(t, "canceller", app)
		victim.expect(t, "ready", nil)
		victim.send(t, "cancel "+strconv.Itoa(i))
		time.Sleep(time.Duration(rng.IntN(3000)) * time.Microsecond) // a random moment, not a wait for anything
		_ = victim.cmd.Process.Signal(syscall.SIGKILL)
		_ = victim.cmd.Wait()
		// The server may still be running the statement the victim sent
		// before it died: wait until its sessions ended, then look.
		require.Eventually(t, func() bool {
			var n int
			require.NoError(t, admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n))
			return n == 0
		}, 10*time.Second, time.Millisecond)
		rec, err := st.LoadTurn(ctx, abortTurn(i))
		require.NoError(t, err)
		if rec.Status == recovery.TurnCancelled {
			committed++
		} else {
			notCommitted++
			// Not committed: no abort may come. The test's own
			// cancellation then commits, and the abort follows.
			select {
			case ev := <-runner.events:
				require.NotEqual(t, "aborted", ev[0], "an abort before any cancellation committed")
			case <-time.After(50 * time.Millisecond):
			}
			require.NoError(t, finisher.Cancel(ctx, "host", abortTurn(i)))
		}
		ab := runner.expect(t, "aborted", func(ev []string) { require.NotEqual(t, "launch", ev[0]) })
		require.Equal(t, strconv.Itoa(i), ab[1])
		after := runner.expect(t, "after", nil)
		assert.Equal(t, string(refusal.CodeTurnNotRunning), after[2])
	}
	t.Logf("canceller killed with SIGKILL: %d cancellations had committed, %d had not", committed, notCommitted)
}
