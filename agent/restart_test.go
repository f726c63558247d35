package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// errDead is what a dead process's window calls return.
var errDead = errors.New("the process died")

// dying is a process's view of the shared window that dies once the
// appends-th append counted by n (its own, or shared by the processes of a
// turn) landed: from then on the process reaches nothing, as if it had
// been killed.
type dying struct {
	replay.Window
	appends int64
	n       *atomic.Int64
	dead    atomic.Bool
}

// newDying is the view of w that dies after the appends-th append counted
// by n; nil n counts its own.
func newDying(w replay.Window, appends int64, n *atomic.Int64) *dying {
	if n == nil {
		n = &atomic.Int64{}
	}
	return &dying{Window: w, appends: appends, n: n}
}

func (d *dying) Append(ctx context.Context, k replay.Key, env *chatprotocol.ChatEventEnvelope) (replay.Frame, error) {
	if d.dead.Load() {
		return replay.Frame{}, errDead
	}
	f, err := d.Window.Append(ctx, k, env)
	if err == nil && d.n.Add(1) == d.appends {
		d.dead.Store(true)
	}
	return f, err
}

func (d *dying) Bounds(ctx context.Context, k replay.Key) (replay.Bounds, error) {
	if d.dead.Load() {
		return replay.Bounds{}, errDead
	}
	return d.Window.Bounds(ctx, k)
}

func (d *dying) Read(ctx context.Context, k replay.Key, cursor int64, maxBytes int) (replay.Bounds, []replay.Frame, error) {
	if d.dead.Load() {
		return replay.Bounds{}, nil, errDead
	}
	return d.Window.Read(ctx, k, cursor, maxBytes)
}

// restartScript is the turn the restart tests run: a step that says
// something and asks for two calls at once, then the answer.
func restartScript() *script {
	return &script{steps: []stepFunc{
		ask("Let me look. ", 10, call("a", "search", "1"), call("b", "search", "2")),
		say("Found both.", 20),
	}}
}

// retryScript is restartScript whose second step fails once, transiently,
// before any output, and is retried.
func retryScript() *script {
	sc := restartScript()
	sc.steps[1] = failOnce(ingest.CodeOverloaded, "", sc.steps[1])
	return sc
}

// A process dies after each of the turn's appends in turn; another process
// resumes the turn and runs the loop again. Each time the turn is one
// consistent turn: every seq once, steps in order, one end, every call
// with one result, and no tool launched twice.
func TestRestartAtEveryPoint(t *testing.T) {
	for name, turnScript := range map[string]func() *script{"plain": restartScript, "retried": retryScript} {
		t.Run(name, func(t *testing.T) { restartAtEveryPoint(t, turnScript) })
	}
}

// restartAtEveryPoint is TestRestartAtEveryPoint for one turn.
func restartAtEveryPoint(t *testing.T, turnScript func() *script) {
	total := func() int64 { // the appends of a turn that nothing interrupts
		s := newStores(t)
		d := newDying(s.window, -1, nil)
		var tools counter
		p, err := s.process().start(d, "t-1")
		require.NoError(t, err)
		out, err := (&agent.Loop{Model: turnScript().model(), Tools: []agent.Tool{searchTool(tools.run)}, Retry: fast}).Run(t.Context(), p, history)
		require.NoError(t, err)
		require.Equal(t, chatprotocol.LifecycleCompleted, out.Status)
		return d.n.Load()
	}()
	require.Greater(t, total, int64(8))
	for crash := int64(1); crash < total; crash++ {
		t.Run(fmt.Sprintf("after append %d", crash), func(t *testing.T) {
			s := newStores(t)
			var tools counter
			loop := &agent.Loop{Model: turnScript().model(), Tools: []agent.Tool{searchTool(tools.run)}, Retry: fast}
			d := newDying(s.window, crash, nil)
			p1, err := s.process().start(d, "t-1")
			require.NoError(t, err)
			out, err := loop.Run(t.Context(), p1, history)
			require.Error(t, err, "the dead process cannot end the turn")
			assert.Empty(t, out.Status)

			out, err = loop.Run(t.Context(), s.process().mustStart("t-1"), history)
			require.NoError(t, err)
			assert.Equal(t, chatprotocol.LifecycleCompleted, out.Status)
			assert.LessOrEqual(t, tools.max(), 1, "no tool launched twice")

			envs := s.envelopes("t-1") // every seq once
			st := s.state("t-1")       // a turn the reducer accepts: steps in order, one end
			assert.Equal(t, chatprotocol.LifecycleCompleted, st.Turns[0].Status)
			ends := 0
			for _, e := range envs {
				if l, ok := e.Event.(*chatprotocol.LifecycleEvent); ok && l.Status.Terminal() {
					ends++
				}
			}
			assert.Equal(t, 1, ends)
			results := map[string]int{}
			for _, r := range of[*chatprotocol.ToolResultEvent](envs) {
				results[r.CallID]++
			}
			for _, c := range of[*chatprotocol.ToolCallEvent](envs) {
				assert.Equal(t, 1, results[c.CallID], "call %s has one result", c.CallID)
			}
			assert.Equal(t, "Found both.", out.Messages[len(out.Messages)-1].Text)
			assert.Equal(t, int64(len(of[*chatprotocol.ToolCallEvent](envs))), tools.total.Load(), "each call launched once")
		})
	}
}

// A process dies inside a tool (the effect admitted, its outcome lost with
// the process): the turn resumed elsewhere never launches it again, and
// fails with agent-tool-outcome-unknown, the call needing reconciliation,
// once the dead worker's lease ended (before, the turn waits interrupted).
func TestRestartInsideATool(t *testing.T) {
	s := newStores(t)
	var launches atomic.Int64
	inside := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	hung := func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		if launches.Add(1) == 1 {
			close(inside)
			<-release // the process is gone: its tool never reports
			return nil, errDead
		}
		return json.RawMessage(`{}`), nil
	}
	sc := &script{steps: []stepFunc{ask("", 1, call("a", "search", "1")), say("Found.", 1)}}
	loop := &agent.Loop{Model: sc.model(), Tools: []agent.Tool{searchTool(hung)}}
	d := newDying(s.window, -1, nil)
	p1, err := s.process().start(d, "t-1")
	require.NoError(t, err)
	first := make(chan error, 1)
	go func() {
		_, err := loop.Run(t.Context(), p1, history)
		first <- err
	}()
	within(t, inside)
	d.dead.Store(true)

	pr2 := s.process()
	out, err := loop.Run(t.Context(), pr2.mustStart("t-1"), history)
	require.ErrorIs(t, err, refusal.ErrClaimConflict, "the dead worker's lease has not ended")
	assert.Equal(t, chatprotocol.LifecycleInterrupted, out.Status)
	s.clock.Advance(recovery.DefaultLease + time.Second)
	out, err = loop.Run(t.Context(), pr2.mustStart("t-1"), history)
	require.NoError(t, err)
	assert.Equal(t, chatprotocol.LifecycleFailed, out.Status)
	assert.Equal(t, agent.CodeUnknownOutcome, out.Failure.Code)
	assert.True(t, errors.Is(out.Failure, refusal.ErrNeedsReconciliation))
	assert.Equal(t, int64(1), launches.Load())
	rec, err := s.store.LoadTurn(t.Context(), refOf("t-1"))
	require.NoError(t, err)
	assert.NotEqual(t, recovery.EffectCompleted, effect(t, rec, 1).State)
	release <- struct{}{}
	assert.Error(t, within(t, first))
	assert.Equal(t, chatprotocol.LifecycleFailed, s.state("t-1").Turns[0].Status)
}

// TurnMessages reads a finished turn's conversation back from its stream:
// what a host gives the model on the next turn.
func TestTurnMessages(t *testing.T) {
	s := newStores(t)
	var tools counter
	out, err := (&agent.Loop{Model: restartScript().model(), Tools: []agent.Tool{searchTool(tools.run)}}).Run(t.Context(), s.process().mustStart("t-1"), history)
	require.NoError(t, err)
	msgs, err := agent.TurnMessages(t.Context(), s.window, replay.Key{ConversationID: convID, TurnID: "t-1"})
	require.NoError(t, err)
	assert.Equal(t, out.Messages, msgs)
}

// A host that stops the loop (its ctx ends) mid-step leaves the turn
// interrupted, the open step ended interrupted with its partial text; a
// Run on the resumed turn reads that text as the step's message and goes
// on with the next step.
func TestHostStopsMidStep(t *testing.T) {
	s := newStores(t)
	streaming := make(chan struct{})
	partial := func(ctx context.Context, _ *agent.Request, sink ingest.Sink) error {
		if err := sink.Delta(ctx, "Refunds take "); err != nil {
			return err
		}
		close(streaming)
		<-ctx.Done()
		return ctx.Err()
	}
	sc := &script{steps: []stepFunc{partial, say("5 days.", 2)}}
	loop := &agent.Loop{Model: sc.model()}
	ctx, stop := context.WithCancel(t.Context())
	done := make(chan agent.Outcome, 1)
	go func() {
		out, err := loop.Run(ctx, s.process().mustStart("t-1"), history)
		assert.NoError(t, err)
		done <- out
	}()
	within(t, streaming)
	stop()
	out := within(t, done)
	assert.Equal(t, chatprotocol.LifecycleInterrupted, out.Status)
	steps := of[*chatprotocol.StepEvent](s.envelopes("t-1"))
	require.Len(t, steps, 2)
	assert.Equal(t, chatprotocol.StepInterrupted, steps[1].Status)

	out, err := loop.Run(t.Context(), s.process().mustStart("t-1"), history)
	require.NoError(t, err)
	assert.Equal(t, chatprotocol.LifecycleCompleted, out.Status)
	assert.Equal(t, 2, out.Steps)
	reqs := sc.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, agent.Message{Role: agent.RoleAssistant, Text: "Refunds take "}, reqs[1].Messages[len(reqs[1].Messages)-1])
	assert.Equal(t, "Refunds take 5 days.", s.state("t-1").Turns[0].Text())
	var status []chatprotocol.StepStatus
	for _, e := range of[*chatprotocol.StepEvent](s.envelopes("t-1")) {
		status = append(status, e.Status)
	}
	assert.Equal(t, []chatprotocol.StepStatus{chatprotocol.StepStarted, chatprotocol.StepInterrupted,
		chatprotocol.StepStarted, chatprotocol.StepFinished}, status)
}
