//go:build unix

package pgstore

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
)

// killPoints are the named failpoints at which a worker kills itself:
// before and after each durable write (the after-kill loses the
// acknowledgement with the process), in an order that leaves the later
// ones something to do (a reconcile needs an effect left unknown), and
// after a launch's side effect, before Launch returned.
func killPoints() []string {
	var out []string
	for _, fp := range recoverytest.Failpoints() {
		site, mode := splitFP(fp)
		if mode == recoverytest.ModeAckLost || site == recoverytest.SiteLoad {
			continue // the lost-ack modes are TestLostAcks's; a read writes nothing
		}
		out = append(out, string(fp))
	}
	return append(out, "launch.after")
}

func splitFP(fp recoverytest.Failpoint) (recoverytest.Site, recoverytest.Mode) {
	s := string(fp)
	for i := range s {
		if s[i] == '.' {
			return recoverytest.Site(s[:i]), recoverytest.Mode(s[i+1:])
		}
	}
	return recoverytest.Site(s), ""
}

// TestKill9 runs worker processes (this test binary re-executed) that
// drive turns against the server and kills them with SIGKILL, first at
// each named failpoint, then at random moments, until -pgstore.kills
// processes died that way; each restart is a fresh process that recovers
// from the database alone and reconciles what it finds unknown through
// the side-effect sink, an append-only file outside the database. In the
// end no effect launched twice, no effect is left admitted without a
// result, every result tells the truth about the sink, and every turn
// ended.
func TestKill9(t *testing.T) {
	needDB(t)
	dir := t.TempDir()
	sink := filepath.Join(dir, "sink.log")
	const batch = 12 // turns a worker starts per run
	var (
		boot      int
		kills     int
		namedHit  = map[string]bool{}
		nextTurn  int
		rng       = rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
		killDelay time.Duration
	)
	run := func(killAt string, delay time.Duration, lo, hi int) (killed bool) {
		t.Helper()
		boot++
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), workerEnv+"="+strconv.Itoa(boot), workerDSN+"="+testDSN, workerSink+"="+sink,
			workerTurns+"="+strconv.Itoa(lo)+"-"+strconv.Itoa(hi), workerKillAt+"="+killAt)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		require.NoError(t, cmd.Start())
		if delay > 0 {
			timer := time.AfterFunc(delay, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
			defer timer.Stop()
		}
		err := cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				return true
			}
		}
		require.NoError(t, err, "worker %d (turns %d-%d, kill at %q):\n%s", boot, lo, hi, killAt, out.String())
		return false
	}
	// Each run recovers the previous batch and starts a new one.
	step := func(killAt string, delay time.Duration) bool {
		lo := max(0, nextTurn-batch)
		nextTurn += batch
		return run(killAt, delay, lo, nextTurn)
	}
	for _, p := range killPoints() {
		if step(p, 0) {
			kills++
			namedHit[p] = true
		}
	}
	for kills < *flagKills {
		killDelay = time.Duration(5+rng.IntN(120)) * time.Millisecond
		if step("", killDelay) {
			kills++
		}
		require.Less(t, boot, 4*(*flagKills)+len(killPoints()), "workers keep finishing before the kill")
	}
	// A last worker, never killed, recovers every turn.
	require.False(t, run("", 0, 0, nextTurn), "the final worker runs to the end")
	for _, p := range killPoints() {
		assert.True(t, namedHit[p], "a worker was killed at %s", p)
	}

	launches, err := readSink(sink)
	require.NoError(t, err)
	pool := newPool(t, poolOpts{})
	st, err := NewRecoveryStore(pool, nil)
	require.NoError(t, err)
	ctx := context.Background()
	var completed, never, dups, admitted, afterCancel int
	for i := range nextTurn {
		turn, cancelAfter := killTurn(i)
		rec, err := st.LoadTurn(ctx, turn)
		require.NoError(t, err, "turn %d", i)
		wantStatus := recovery.TurnCompleted
		if cancelAfter >= 0 {
			wantStatus = recovery.TurnCancelled
		}
		assert.Equal(t, wantStatus, rec.Status, "turn %d ended", i)
		for _, e := range rec.Effects {
			ref := recovery.EffectRef{Turn: turn, Effect: e.ID}
			n := launches[sinkKey(ref)]
			if n > 1 {
				dups++
				t.Errorf("%v launched %d times", ref, n)
			}
			switch e.State {
			case recovery.EffectCompleted:
				completed++
				want := "not-run"
				if n > 0 {
					want = "ran:" + e.ID
				}
				assert.Equal(t, want, string(e.Result.Data), "%v: the stored result tells the truth about the sink", ref)
			case recovery.EffectPending, recovery.EffectClaimed:
				never++
				assert.Equal(t, recovery.TurnCancelled, rec.Status, "%v never ran although its turn finished", ref)
				assert.Zero(t, n, "%v launched without an admission", ref)
				if rec.Status == recovery.TurnCancelled {
					afterCancel += n // never admitted before the cancellation, yet launched
				}
			default:
				admitted++
				t.Errorf("%v left %s without a reported status", ref, e.State)
			}
		}
	}
	t.Logf("%d worker processes, %d killed with SIGKILL (%d at named failpoints, the rest at random moments); "+
		"%d turns, %d effects completed, %d never admitted (cancelled turns), %d launches in the sink, %d duplicates, "+
		"%d launches after a committed cancellation, %d left admitted",
		boot, kills, len(namedHit), nextTurn, completed, never, len(launches), dups, afterCancel, admitted)
}
