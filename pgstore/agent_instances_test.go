//go:build unix

package pgstore

import (
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// TestAgentTurnAcrossInstances kills a process running an agent turn
// (agent.Loop: steps of deltas and one tool call each, then the answer)
// with SIGKILL, at a random moment or right after a tool's launch, and has
// another process resume the turn and run the loop again, until one ends
// it; the processes share only the database. The turn is one consistent
// turn (docs/contract.md section 19.4): seqs 1..N once, a state the
// reducer accepts (steps in order, each ended once), every tool call of
// the script once with one result, no tool launched twice, and the last
// step finished with the model's answer. -pgstore.turnkills/2 sets the
// number of kills, -pgstore.seed the schedule.
func TestAgentTurnAcrossInstances(t *testing.T) {
	needDB(t)
	bin := buildTurnWorker(t)
	seed := *flagSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (-pgstore.seed)", seed)
	rng := rand.New(rand.NewPCG(seed, 19))
	sink := filepath.Join(t.TempDir(), "launches.log")
	w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{CatchUpInterval: 200 * time.Millisecond})
	st := newRecoveryStore(t, poolOpts{})
	ctx := t.Context()
	prefix := "xagent-" + randomSuffix()
	const tools, deltas = 3, 4
	var rounds, procs, kills, afterLaunch, interrupted, frames int
	for kills < max(1, *flagTurnKills/2) {
		require.Less(t, procs, 6*(*flagTurnKills)+10, "producers keep finishing before the kill")
		rounds++
		key := replay.Key{ConversationID: prefix + "-" + strconv.Itoa(rounds), TurnID: "t"}
		toKill := 1 + rng.IntN(2)
		for i := 0; ; i++ {
			procs++
			p := startTurnProc(t, bin, "-mode", "agent", "-dsn", testDSN, "-conversation", key.ConversationID, "-turn", key.TurnID,
				"-boot", key.ConversationID+"/"+strconv.Itoa(i), "-sink", sink, "-tools", strconv.Itoa(tools), "-deltas", strconv.Itoa(deltas))
			kill := i < toKill
			atLaunch := kill && rng.IntN(2) == 0
			nth, seen := 1+rng.IntN(tools), 0
			var timer *time.Timer
			done := ""
			for ev := p.next(t, 30*time.Second); ev != nil; ev = p.next(t, 30*time.Second) {
				switch ev[0] {
				case "ready":
					if kill && !atLaunch {
						timer = time.AfterFunc(time.Duration(rng.IntN(250))*time.Millisecond, p.sigkill)
					}
				case "launch":
					if seen++; atLaunch && seen == nth {
						time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond) // inside the tool's 25 ms
						p.sigkill()
					}
				case "done":
					done = ev[1]
				}
			}
			if timer != nil {
				timer.Stop()
			}
			<-p.exited
			if p.killed {
				kills++
				if atLaunch {
					afterLaunch++
				}
				continue
			}
			require.NoError(t, p.err, "producer %d of round %d: %s", i, rounds, p.stderr.String())
			require.Contains(t, []string{"completed", "ended-before"}, done, "round %d", rounds)
			break
		}

		b, stored, err := w.Read(ctx, key, 0, 1<<30)
		require.NoError(t, err)
		require.True(t, b.Ended)
		require.Len(t, stored, int(b.Latest), "round %d: the window holds seqs 1..%d", rounds, b.Latest)
		state := chatprotocol.NewChatStateV1(key.ConversationID)
		for i, fr := range stored {
			require.Equal(t, int64(i+1), fr.Seq)
			env, err := chatprotocol.ParseEnvelope(fr.Data)
			require.NoError(t, err)
			require.NoError(t, state.Apply(env), "round %d: seq %d", rounds, fr.Seq)
		}
		frames += len(stored)
		ts, ok := state.Turn(key.TurnID)
		require.True(t, ok)
		assert.Equal(t, chatprotocol.LifecycleCompleted, ts.Status, "round %d", rounds)
		require.NotEmpty(t, ts.Steps)
		last := ts.Steps[len(ts.Steps)-1]
		assert.Equal(t, chatprotocol.StepState{Step: int64(len(ts.Steps)), Status: chatprotocol.StepFinished, Reason: "end_turn"}, last, "round %d", rounds)
		for _, s := range ts.Steps {
			if s.Status == chatprotocol.StepInterrupted {
				interrupted++
			}
		}
		require.Len(t, ts.ToolCalls, tools, "round %d: every call of the script once", rounds)
		counts, err := readSink(sink)
		require.NoError(t, err)
		rec, err := st.LoadTurn(ctx, recovery.TurnRef{Conversation: key.ConversationID, Turn: key.TurnID})
		require.NoError(t, err)
		assert.Equal(t, recovery.TurnCompleted, rec.Status)
		for k := 1; k <= tools; k++ {
			call := ts.ToolCalls[k-1]
			assert.Equal(t, "call-"+strconv.Itoa(k), call.CallID, "round %d", rounds)
			assert.NotEqual(t, chatprotocol.ToolCallPending, call.Status, "round %d: call %d has its result", rounds, k)
			n := counts[key.ConversationID+"|"+key.TurnID+"|"+strconv.Itoa(k)]
			require.LessOrEqual(t, n, 1, "round %d: tool %d launched %d times", rounds, k, n)
			eff, ok := rec.Effect("tool-" + strconv.Itoa(k))
			require.True(t, ok)
			assert.Equal(t, recovery.EffectCompleted, eff.State, "round %d: tool %d", rounds, k)
		}
	}
	t.Logf("%d rounds (one agent turn each), %d processes, %d killed with SIGKILL (%d right after a tool's launch); "+
		"%d frames, each seq once; %d steps ended interrupted by a resumed loop; no tool launched twice",
		rounds, procs, kills, afterLaunch, frames, interrupted)
}
