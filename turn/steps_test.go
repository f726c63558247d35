package turn_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// stepOf returns the step event of env.
func stepOf(t *testing.T, env chatprotocol.ChatEventEnvelope) *chatprotocol.StepEvent {
	t.Helper()
	ev, ok := env.Event.(*chatprotocol.StepEvent)
	require.True(t, ok, "seq %d is a %s", env.Seq, env.Event.EventType())
	return ev
}

// A turn of two model steps: each opens with step started and the next
// number, ends with its status, reason and usage, and the terminal
// lifecycle carries the sum of the steps' usage (docs/contract.md section
// 16.7).
func TestStepsNumberAndSumUsage(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	assert.Equal(t, int64(0), p.Steps())
	assert.Equal(t, int64(0), p.OpenStep())

	n, err := p.StartStep(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	assert.Equal(t, int64(1), p.OpenStep())
	require.NoError(t, p.Delta(ctx, "Looking."))
	t1, c1 := int64(30), 0.25
	require.NoError(t, p.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepFinished, Reason: "tool_use",
		Usage: &chatprotocol.Usage{TotalTokens: &t1, CostUSD: &c1}}))
	assert.Equal(t, int64(0), p.OpenStep())
	assert.Equal(t, int64(1), p.Steps())

	n, err = p.StartStep(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)
	t2 := int64(12)
	require.NoError(t, p.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepFinished, Reason: "stop",
		Usage: &chatprotocol.Usage{TotalTokens: &t2}}))
	require.NoError(t, p.Complete(ctx))

	envs := h.envelopes("t-1")
	assert.Equal(t, []string{"lifecycle", "step", "delta", "step", "step", "step", "lifecycle"}, types(envs))
	assert.Equal(t, chatprotocol.StepEvent{Step: 1, Status: chatprotocol.StepStarted}, *stepOf(t, envs[1]))
	end1 := stepOf(t, envs[3])
	assert.Equal(t, int64(1), end1.Step)
	assert.Equal(t, chatprotocol.StepFinished, end1.Status)
	assert.Equal(t, "tool_use", end1.Reason)
	assert.Equal(t, int64(30), *end1.Usage.TotalTokens)
	assert.Equal(t, chatprotocol.StepEvent{Step: 2, Status: chatprotocol.StepStarted}, *stepOf(t, envs[4]))
	assert.Equal(t, int64(2), stepOf(t, envs[5]).Step)
	end := envs[6].Event.(*chatprotocol.LifecycleEvent)
	require.NotNil(t, end.Usage)
	assert.Equal(t, int64(42), *end.Usage.TotalTokens)
	assert.Equal(t, 0.25, *end.Usage.CostUSD)
	assert.Equal(t, int64(30), t1, "the step's usage is not changed by the sum")

	_, err = p.StartStep(ctx)
	assert.ErrorIs(t, err, refusal.ErrTurnTerminated)
	assert.ErrorIs(t, p.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepFinished}), refusal.ErrTurnTerminated)
}

// One step is open at a time; an end needs an open step and an end
// status; a step event never goes through Emit. Each refusal appends
// nothing.
func TestStepRefusals(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	err := p.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepFinished})
	assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err))
	assert.Equal(t, "/event/step", err.(*refusal.Error).Path)

	_, err = p.StartStep(ctx)
	require.NoError(t, err)
	_, err = p.StartStep(ctx)
	assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err))
	assert.Equal(t, "/event/step", err.(*refusal.Error).Path)
	for _, s := range []chatprotocol.StepStatus{chatprotocol.StepStarted, "", "completed"} {
		err = p.FinishStep(ctx, turn.StepEnd{Status: s})
		assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err), s)
		assert.Equal(t, "/event/status", err.(*refusal.Error).Path, s)
	}
	err = p.Emit(ctx, &chatprotocol.StepEvent{Step: 2, Status: chatprotocol.StepStarted})
	assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err))
	assert.Equal(t, int64(2), p.Latest(), "no refusal appended anything")
	assert.Equal(t, int64(1), p.OpenStep())
}

// End with a step open ends it interrupted first, its reason the turn's
// status; a step's reason is cut as the end's texts are.
func TestEndInterruptsTheOpenStep(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	_, err := p.StartStep(ctx)
	require.NoError(t, err)
	long := strings.Repeat("é", turn.MaxEndTextBytes)
	require.NoError(t, p.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepFailed, Reason: long}))
	_, err = p.StartStep(ctx)
	require.NoError(t, err)
	require.NoError(t, p.Fail(ctx, turn.Failure{Code: "provider-error", Message: "no"}))

	envs := h.envelopes("t-1")
	assert.Equal(t, []string{"lifecycle", "step", "step", "step", "step", "error", "lifecycle"}, types(envs))
	assert.Equal(t, long[:turn.MaxEndTextBytes], stepOf(t, envs[2]).Reason)
	assert.Equal(t, chatprotocol.StepEvent{Step: 2, Status: chatprotocol.StepInterrupted, Reason: "failed"}, *stepOf(t, envs[4]))
	assert.Equal(t, int64(0), p.OpenStep())
	s := h.state("t-1")
	tt, _ := s.Turn("t-1")
	assert.Equal(t, chatprotocol.LifecycleFailed, tt.Status)
}

// A resumed Producer learns the open and the last step from the retained
// frames, and goes on with the next number.
func TestResumeLearnsSteps(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p1 := h.start("t-1")
	for range 2 {
		_, err := p1.StartStep(ctx)
		require.NoError(t, err)
		require.NoError(t, p1.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepFinished}))
	}
	_, err := p1.StartStep(ctx)
	require.NoError(t, err)

	p2 := h.start("t-1")
	assert.Equal(t, int64(3), p2.OpenStep())
	assert.Equal(t, int64(3), p2.Steps())
	_, err = p2.StartStep(ctx)
	assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err))
	tokens := int64(5)
	require.NoError(t, p2.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepInterrupted, Reason: "worker restarted", Usage: &chatprotocol.Usage{TotalTokens: &tokens}}))

	p3 := h.start("t-1")
	assert.Equal(t, int64(0), p3.OpenStep())
	assert.Equal(t, int64(3), p3.Steps())
	n, err := p3.StartStep(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(4), n)
	require.NoError(t, p3.Complete(ctx))
	envs := h.envelopes("t-1")
	end := envs[len(envs)-1].Event.(*chatprotocol.LifecycleEvent)
	require.NotNil(t, end.Usage, "a resumed producer sums the usage of the retained step ends")
	assert.Equal(t, int64(5), *end.Usage.TotalTokens)
}

// A resumed turn whose window pruned its start and retains no step event
// cannot number its next step: StartStep is refused with stale-cursor.
// One that retains a step event goes on after it.
func TestResumePrunedSteps(t *testing.T) {
	ctx := t.Context()
	h := newHostOn(t, replay.NewMemory(&replay.MemoryOptions{MaxFrames: 3}))
	p1 := h.start("t-1")
	_, err := p1.StartStep(ctx)
	require.NoError(t, err)
	require.NoError(t, p1.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepFinished}))
	for range 3 {
		require.NoError(t, p1.Delta(ctx, "x"))
	}
	p2 := h.start("t-1")
	_, err = p2.StartStep(ctx)
	assert.ErrorIs(t, err, refusal.ErrStaleCursor)
	require.NoError(t, p2.Delta(ctx, "y"), "text goes on")
}

// The sum of the steps' usage stays a usage the end can carry: tokens stop
// at 2^53-1.
func TestStepUsageSumSaturates(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	for _, n := range []int64{chatprotocol.MaxSeq - 1, 5} {
		_, err := p.StartStep(ctx)
		require.NoError(t, err)
		require.NoError(t, p.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepFinished, Usage: &chatprotocol.Usage{TotalTokens: &n}}))
	}
	require.NoError(t, p.Complete(ctx))
	envs := h.envelopes("t-1")
	end := envs[len(envs)-1].Event.(*chatprotocol.LifecycleEvent)
	assert.Equal(t, int64(chatprotocol.MaxSeq), *end.Usage.TotalTokens)
	assert.Nil(t, end.Usage.CostUSD)
}

// TestResumePrunedKeepsRetainedStep: a step event among the retained
// frames gives the number even when the start was pruned.
func TestResumePrunedKeepsRetainedStep(t *testing.T) {
	ctx := t.Context()
	h := newHostOn(t, replay.NewMemory(&replay.MemoryOptions{MaxFrames: 3}))
	p1 := h.start("t-1")
	for range 3 {
		require.NoError(t, p1.Delta(ctx, "x"))
	}
	for range 4 {
		_, err := p1.StartStep(ctx)
		require.NoError(t, err)
		require.NoError(t, p1.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepFinished}))
	}
	p2 := h.start("t-1")
	assert.Equal(t, int64(4), p2.Steps())
	n, err := p2.StartStep(ctx)
	require.NoError(t, err)
	assert.Equal(t, int64(5), n)
}
