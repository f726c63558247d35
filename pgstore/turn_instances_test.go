//go:build unix

package pgstore

import (
	"bufio"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/stream"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// buildTurnWorker builds internal/turnworker into a temporary directory.
func buildTurnWorker(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "turnworker")
	out, err := exec.Command("go", "build", "-o", bin, "./internal/turnworker").CombinedOutput()
	require.NoError(t, err, "go build ./internal/turnworker: %s", out)
	return bin
}

// turnProc is one turnworker process and the events it reported.
type turnProc struct {
	cmd    *exec.Cmd
	events chan []string // every line, split; closed when stdout ends
	stderr lockedBuffer
	exited chan struct{}
	killed bool // set before exited is closed
	err    error
}

func startTurnProc(t *testing.T, bin string, args ...string) *turnProc {
	t.Helper()
	p := &turnProc{cmd: exec.Command(bin, args...), events: make(chan []string, 4096), exited: make(chan struct{})}
	p.cmd.Stderr = &p.stderr
	stdout, err := p.cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, p.cmd.Start())
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			p.events <- strings.Fields(sc.Text())
		}
		close(p.events)
		p.err = p.cmd.Wait()
		var exit *exec.ExitError
		if errors.As(p.err, &exit) {
			ws, ok := exit.Sys().(syscall.WaitStatus)
			p.killed = ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
		}
		close(p.exited)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

func (p *turnProc) sigkill() { _ = p.cmd.Process.Signal(syscall.SIGKILL) }

// next returns the next event, or nil once the process ended; it fails t
// after timeout.
func (p *turnProc) next(t *testing.T, timeout time.Duration) []string {
	t.Helper()
	select {
	case ev, ok := <-p.events:
		if !ok {
			return nil
		}
		return ev
	case <-time.After(timeout):
		p.sigkill()
		t.Fatalf("the producer process said nothing for %v; stderr: %s", timeout, p.stderr.String())
		return nil
	}
}

// The scripted turn of the turnworker, as its flags below set it.
const (
	xTools  = 4
	xDeltas = 6
)

func xDeltaText(n int) string { return "part " + strconv.Itoa(n) + " of the answer. " }

func xToolOutput(k int) string {
	return `{"k":` + strconv.Itoa(k) + `,"found":"result of call ` + strconv.Itoa(k) + `"}`
}

// TestTurnAcrossInstances kills a producer process with SIGKILL in the
// middle of a turn, at a random moment or right after one of its tools
// launched (between its launch and its result), and has the turn
// continued by a producer process of its own ("another instance": a new
// process, a new pool), killed in its turn in some rounds, until one
// ends it; the instances share only the database. Followers on this
// process (stream.Handler over a Window of its own, read by stream.Follow
// and by a raw SSE client that keeps duplicates) see seqs 1..N exactly
// once, in order, in a state that reduces (ChatStateV1.Apply refuses
// nothing) to the whole script; every tool launched at most once (the
// sink, the tools' own durable record); and a tool whose launch was
// admitted but whose outcome was lost with its process surfaced
// needs-reconciliation, was reconciled from the sink, and was never
// launched again. -pgstore.turnkills sets the number of kills,
// -pgstore.seed the schedule.
func TestTurnAcrossInstances(t *testing.T) {
	needDB(t)
	bin := buildTurnWorker(t)
	seed := *flagSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-pgstore.seed)", seed)
	rng := rand.New(rand.NewPCG(seed, 16))
	sink := filepath.Join(t.TempDir(), "launches.log")
	w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{CatchUpInterval: 200 * time.Millisecond})
	h, err := stream.NewHandler(w, &stream.HandlerOptions{Authorize: func(*http.Request, replay.Key) error { return nil }, Options: serve.Options{Retry: 50 * time.Millisecond}})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("GET /conversations/{conversation}/turns/{turn}/events", h)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(h.Close)
	st := newRecoveryStore(t, poolOpts{})
	ctx := t.Context()
	prefix := "xturn-" + randomSuffix()

	var (
		rounds, procs, kills, killsAtRandom, killsAfterLaunch, killedMidTool                  int
		frames, launches, unknowns, reconciledLaunched, reconciledNot, leaseWaits, lateFrames int
	)
	for kills < *flagTurnKills {
		require.Less(t, procs, 6*(*flagTurnKills)+10, "producers keep finishing before the kill")
		rounds++
		key := replay.Key{ConversationID: prefix + "-" + strconv.Itoa(rounds), TurnID: "t"}
		url := srv.URL + "/conversations/" + key.ConversationID + "/turns/" + key.TurnID + "/events"
		fctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		type followed struct {
			frames []seenFrame
			state  *chatprotocol.ChatStateV1
			seqs   []int64
			err    error
		}
		raw, red := make(chan followed, 1), make(chan followed, 1)
		go func() {
			fr, _, err := rawFollow(fctx, url)
			raw <- followed{frames: fr, err: err}
		}()
		go func() {
			var seqs []int64
			state, err := stream.Follow(fctx, url, &stream.FollowOptions{Retry: 50 * time.Millisecond,
				OnEnvelope: func(env *chatprotocol.ChatEventEnvelope) error { seqs = append(seqs, env.Seq); return nil }})
			red <- followed{state: state, seqs: seqs, err: err}
		}()

		// The producers of the round: the first ones killed, the last one
		// left to end the turn.
		toKill := 1 + rng.IntN(2)
		launchedBy := map[int]string{} // tool → the process that launched it
		resulted := map[int]bool{}     // tool → a result line was said
		unknownSaid := map[int]bool{}
		for i := 0; ; i++ {
			procs++
			boot := key.ConversationID + "/" + strconv.Itoa(i)
			p := startTurnProc(t, bin, "-mode", "script", "-dsn", testDSN, "-conversation", key.ConversationID, "-turn", key.TurnID,
				"-boot", boot, "-sink", sink, "-tools", strconv.Itoa(xTools), "-deltas", strconv.Itoa(xDeltas))
			kill := i < toKill
			afterLaunch := kill && rng.IntN(2) == 0
			nthLaunch := 1 + rng.IntN(xTools)
			var timer *time.Timer
			seen := 0
			for ev := p.next(t, 30*time.Second); ev != nil; ev = p.next(t, 30*time.Second) {
				switch ev[0] {
				case "ready":
					if kill && !afterLaunch {
						timer = time.AfterFunc(time.Duration(rng.IntN(300))*time.Millisecond, p.sigkill)
					}
				case "launch":
					k, _ := strconv.Atoi(ev[1])
					launchedBy[k] = boot
					launches++
					if seen++; afterLaunch && seen == nthLaunch {
						time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond) // inside the tool's 25 ms
						p.sigkill()
					}
				case "result":
					k, _ := strconv.Atoi(ev[1])
					resulted[k] = true
				case "unknown":
					k, _ := strconv.Atoi(ev[1])
					unknownSaid[k] = true
					unknowns++
				case "reconciled":
					if ev[2] == "1" {
						reconciledLaunched++
					} else {
						reconciledNot++
					}
				case "lease":
					leaseWaits++
				case "restart":
					lateFrames++
				}
			}
			if timer != nil {
				timer.Stop()
			}
			<-p.exited
			if p.killed {
				kills++
				if afterLaunch {
					killsAfterLaunch++
				} else {
					killsAtRandom++
				}
				for k, by := range launchedBy {
					if by == boot && !resulted[k] {
						killedMidTool++
					}
				}
				continue
			}
			require.NoError(t, p.err, "producer %s: %s", boot, p.stderr.String())
			break // it ended the turn
		}

		// What the followers saw.
		r := <-raw
		f := <-red
		cancel()
		require.NoError(t, r.err, "round %d: raw follower", rounds)
		require.NoError(t, f.err, "round %d: stream.Follow: the state reduces, nothing refused", rounds)
		b, stored, err := w.Read(ctx, key, 0, 1<<30)
		require.NoError(t, err)
		require.True(t, b.Ended)
		require.Len(t, stored, int(b.Latest), "round %d: the window holds seqs 1..%d", rounds, b.Latest)
		want := make([][]byte, len(stored))
		for i, fr := range stored {
			require.Equal(t, int64(i+1), fr.Seq)
			want[i] = fr.Data
		}
		requireExactly(t, "raw follower, round "+strconv.Itoa(rounds), r.frames, want)
		require.Len(t, f.seqs, len(stored), "round %d: stream.Follow applied every seq once", rounds)
		for i, s := range f.seqs {
			require.Equal(t, int64(i+1), s)
		}
		frames += len(stored)

		// The state is the whole script, once.
		ts, ok := f.state.Turn(key.TurnID)
		require.True(t, ok)
		assert.Equal(t, chatprotocol.LifecycleCompleted, ts.Status, "round %d", rounds)
		var text strings.Builder
		for n := 1; n <= xDeltas*(xTools+1); n++ {
			text.WriteString(xDeltaText(n))
		}
		assert.Equal(t, text.String(), ts.Text(), "round %d: every delta once, in order", rounds)
		require.Len(t, ts.ToolCalls, xTools, "round %d", rounds)
		counts, err := readSink(sink)
		require.NoError(t, err)
		rec, err := st.LoadTurn(ctx, recovery.TurnRef{Conversation: key.ConversationID, Turn: key.TurnID})
		require.NoError(t, err)
		assert.Equal(t, recovery.TurnCompleted, rec.Status)
		needsRec := map[string]int{} // call id → lifecycle needs-reconciliation frames naming it
		for _, fr := range stored {
			if fr.Type != chatprotocol.EventTypeLifecycle {
				continue
			}
			env, err := chatprotocol.ParseEnvelope(fr.Data)
			require.NoError(t, err)
			if lc := env.Event.(*chatprotocol.LifecycleEvent); lc.Status == chatprotocol.LifecycleNeedsReconciliation {
				needsRec[strings.TrimSuffix(strings.TrimPrefix(lc.Reason, "tool call "), ": outcome unknown")]++
			}
		}
		for k := 1; k <= xTools; k++ {
			id := "call-" + strconv.Itoa(k)
			n := counts[key.ConversationID+"|"+key.TurnID+"|"+strconv.Itoa(k)]
			require.LessOrEqual(t, n, 1, "round %d: tool %d launched %d times", rounds, k, n)
			call := ts.ToolCalls[k-1]
			require.Equal(t, id, call.CallID)
			eff, ok := rec.Effect("tool-" + strconv.Itoa(k))
			require.True(t, ok)
			require.Equal(t, recovery.EffectCompleted, eff.State, "round %d: tool %d", rounds, k)
			if n == 1 {
				assert.Equal(t, chatprotocol.ToolCallStatus(chatprotocol.ToolResultOK), call.Status, "round %d: tool %d ran", rounds, k)
				assert.JSONEq(t, xToolOutput(k), string(call.Output))
			} else {
				assert.True(t, eff.Reconciled, "round %d: tool %d never ran, so only a reconciliation can have completed it", rounds, k)
				assert.Equal(t, chatprotocol.ToolCallStatus(chatprotocol.ToolResultCancelled), call.Status)
			}
			// An outcome lost with its process is needs-reconciliation on the
			// stream and in the store, and only then.
			assert.Equal(t, eff.Reconciled, unknownSaid[k], "round %d: tool %d: reconciled iff a producer found its outcome unknown", rounds, k)
			assert.Equal(t, eff.Reconciled, needsRec[id] > 0, "round %d: tool %d: needs-reconciliation on the stream iff reconciled", rounds, k)
		}
	}
	total := 0
	counts, err := readSink(sink)
	require.NoError(t, err)
	for _, n := range counts {
		total += n
	}
	// A process killed between its sink line and its report launched
	// without saying so: the sink is the record.
	assert.LessOrEqual(t, launches, total, "every launch reported is in the sink")
	t.Logf("%d rounds (one turn each), %d producer processes, %d killed with SIGKILL (%d at a random moment, %d right after a tool's launch; "+
		"%d with a tool launched and no result yet); %d frames, each seen once by both followers; %d tool launches in the sink, none twice; "+
		"%d outcomes unknown after a kill, reconciled from the sink (%d had launched, %d had not); %d waits for a dead producer's claim; "+
		"%d late frames of a killed producer (its last statement committed after the next one resumed: that one started again)",
		rounds, procs, kills, killsAtRandom, killsAfterLaunch, killedMidTool, frames, total, unknowns, reconciledLaunched, reconciledNot, leaseWaits, lateFrames)
}

// TestCancelAcrossInstances runs a turn's producer in one process
// (instance A: its AbortListener carrying cancellations to its turn.Runs,
// the turn watched with WatchTurn) and serves the cancel endpoint
// (turn.NewCancelHandler) from this one (instance B: its own pool and
// store, an Aborter that knows none of A's turns). The cancellation
// commits on B, A's listener aborts A's turn: its model loop's Context
// and the tool in flight end with turn.ErrCancelled, the tool's
// cancelled outcome is stored and appended, and the stream, followed on
// B, ends with lifecycle cancelled. Cancelled inside a tool and between
// deltas, with A's listening connection up, and cut right before the
// cancellation (the catch-up read after the reconnection aborts).
func TestCancelAcrossInstances(t *testing.T) {
	needDB(t)
	bin := buildTurnWorker(t)
	w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{CatchUpInterval: 200 * time.Millisecond})
	h, err := stream.NewHandler(w, &stream.HandlerOptions{Authorize: func(*http.Request, replay.Key) error { return nil }, Options: serve.Options{Retry: 50 * time.Millisecond}})
	require.NoError(t, err)
	st := newRecoveryStore(t, poolOpts{})
	rec := recovery.New(recovery.Host{Store: st, Authorizer: allowAll{}, Aborter: turn.NewRuns()}, nil)
	cancelHandler, err := turn.NewCancelHandler(rec, &turn.CancelHandlerOptions{Caller: func(*http.Request) (string, error) { return "host", nil }})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("GET /conversations/{conversation}/turns/{turn}/events", h)
	mux.Handle("POST /conversations/{conversation}/turns/{turn}/cancel", cancelHandler)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	t.Cleanup(h.Close)
	admin := newPool(t, poolOpts{})
	ctx := t.Context()
	prefix := "xturncancel-" + randomSuffix()
	listeners := func() int {
		var n int
		require.NoError(t, admin.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE application_name = 'pgstore-abort-listener' AND datname = current_database()`).Scan(&n))
		return n
	}

	for _, tc := range []struct {
		at  string
		cut bool
	}{{"tool", false}, {"loop", false}, {"tool", true}, {"loop", true}} {
		name := tc.at
		if tc.cut {
			name += ", listener cut"
		}
		key := replay.Key{ConversationID: prefix + "-" + tc.at + "-" + strconv.FormatBool(tc.cut), TurnID: "t"}
		base := srv.URL + "/conversations/" + key.ConversationID + "/turns/" + key.TurnID
		retry := "20ms"
		if tc.cut {
			retry = "500ms" // A stays deaf while the cancellation commits
		}
		a := startTurnProc(t, bin, "-mode", "cancel", "-cancel-at", tc.at, "-listen-retry", retry, "-dsn", testDSN,
			"-conversation", key.ConversationID, "-turn", key.TurnID, "-boot", "a-"+key.ConversationID, "-pace", "5ms")
		require.Equal(t, "listening", a.next(t, 30*time.Second)[0], name)
		followed := make(chan *chatprotocol.ChatStateV1, 1)
		ferr := make(chan error, 1)
		go func() {
			fctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			s, err := stream.Follow(fctx, base+"/events", &stream.FollowOptions{Retry: 50 * time.Millisecond})
			ferr <- err
			followed <- s
		}()
		var events [][]string
		waitFor := func(kind string) []string {
			t.Helper()
			for ev := a.next(t, 30*time.Second); ev != nil; ev = a.next(t, 30*time.Second) {
				events = append(events, ev)
				if ev[0] == kind {
					return ev
				}
			}
			t.Fatalf("%s: the producer ended before %q; stderr: %s", name, kind, a.stderr.String())
			return nil
		}
		if tc.at == "tool" {
			waitFor("launch")
		} else {
			waitFor("streaming")
		}
		if tc.cut {
			var n int
			require.NoError(t, admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE application_name = 'pgstore-abort-listener' AND datname = current_database()`).Scan(&n))
			require.Equal(t, 1, n, "%s: A's one listening connection", name)
			require.Eventually(t, func() bool { return listeners() == 0 }, 10*time.Second, time.Millisecond)
		}
		posted := time.Now()
		resp, err := http.Post(base+"/cancel", "application/json", nil) // a cancel no cross-site form can send
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode, name)
		committed := time.Now()
		if tc.cut {
			assert.Zero(t, listeners(), "%s: the cancellation committed while A was not listening", name)
		}
		loop := waitFor("aborted")
		for loop[1] != "loop" {
			loop = waitFor("aborted")
		}
		assert.Equal(t, "cancelled", loop[3], "%s: the model loop's Context ended with turn.ErrCancelled", name)
		abortedAt := time.Unix(0, mustInt64(t, loop[2]))
		assert.True(t, abortedAt.After(posted), "%s: no abort before the cancel request", name)
		done := waitFor("done")
		assert.Equal(t, "cancelled", done[1], name)
		if tc.at == "tool" {
			var tool []string
			for _, ev := range events {
				if ev[0] == "aborted" && ev[1] == "tool" {
					tool = ev
				}
			}
			require.NotNil(t, tool, "%s: the tool in flight was aborted", name)
			assert.Equal(t, "cancelled", tool[3], name)
		}
		<-a.exited
		require.NoError(t, a.err, "%s: %s", name, a.stderr.String())

		require.NoError(t, <-ferr, "%s: the followed stream reduces", name)
		s := <-followed
		ts, ok := s.Turn(key.TurnID)
		require.True(t, ok)
		assert.Equal(t, chatprotocol.LifecycleCancelled, ts.Status, "%s: the stream ends with lifecycle cancelled", name)
		r, err := st.LoadTurn(ctx, recovery.TurnRef{Conversation: key.ConversationID, Turn: key.TurnID})
		require.NoError(t, err)
		assert.Equal(t, recovery.TurnCancelled, r.Status)
		if tc.at == "tool" {
			require.Len(t, ts.ToolCalls, 1)
			assert.Equal(t, chatprotocol.ToolCallStatus(chatprotocol.ToolResultCancelled), ts.ToolCalls[0].Status, "%s: the aborted tool's outcome", name)
			eff, _ := r.Effect("tool-1")
			assert.Equal(t, recovery.EffectCompleted, eff.State, "%s: its outcome is stored", name)
			assert.False(t, eff.Reconciled)
		} else {
			assert.Empty(t, ts.ToolCalls)
		}
		t.Logf("%s: cancel answered in %v; A's model loop aborted %v after the request; %d deltas streamed", name,
			committed.Sub(posted), abortedAt.Sub(posted), strings.Count(ts.Text(), "part "))
	}
}

func mustInt64(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return n
}
