package chatprotocol

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// TestApplyFoldsSteps: each step is an entry of its turn's steps, started
// until its end gives its status, reason and usage (docs/contract.md
// section 7.1); the turn's usage stays its terminal lifecycle's.
func TestApplyFoldsSteps(t *testing.T) {
	t1, t2, total := int64(30), int64(12), int64(42)
	s := NewChatStateV1("c-1")
	applyAll(t, s,
		env(1, &LifecycleEvent{Status: LifecycleStarted}),
		env(2, &StepEvent{Step: 1, Status: StepStarted}),
		env(3, &DeltaEvent{Text: "Looking."}),
		env(4, &StepEvent{Step: 1, Status: StepFinished, Reason: "tool_use", Usage: &Usage{TotalTokens: &t1}}),
		env(5, &StepEvent{Step: 2, Status: StepStarted}),
	)
	turn, _ := s.Turn("t-1")
	assert.Equal(t, []StepState{{Step: 1, Status: StepFinished, Reason: "tool_use", Usage: &Usage{TotalTokens: &t1}}, {Step: 2, Status: StepStarted}}, turn.Steps)
	clone := s.Clone()
	applyAll(t, s,
		env(6, &StepEvent{Step: 2, Status: StepFailed, Reason: "provider-overloaded", Usage: &Usage{TotalTokens: &t2}}),
		env(7, &LifecycleEvent{Status: LifecycleCompleted, Usage: &Usage{TotalTokens: &total}}),
	)
	assert.JSONEq(t, `{"schemaVersion":1,"conversationId":"c-1","turns":[{"turnId":"t-1","status":"completed","lastSeq":7,
		"text":"Looking.","toolCalls":[],"results":[],"provenance":[],
		"steps":[{"step":1,"status":"finished","reason":"tool_use","usage":{"totalTokens":30}},
			{"step":2,"status":"failed","reason":"provider-overloaded","usage":{"totalTokens":12}}],
		"usage":{"totalTokens":42}}],"openCards":[]}`, stateJSON(t, s))
	ct, _ := clone.Turn("t-1")
	assert.Equal(t, StepStarted, ct.Steps[1].Status, "the clone goes on independently")
	require.NoError(t, clone.Apply(env(6, &StepEvent{Step: 2, Status: StepInterrupted})))
	assert.Equal(t, StepFailed, turn.Steps[1].Status)

	err := s.Apply(env(8, &StepEvent{Step: 3, Status: StepStarted}))
	assert.Equal(t, refusal.CodeTurnTerminated, refusal.CodeOf(err), "after the end, as any event")
}

// TestApplyRefusesStepsOutOfOrder: a start that does not number the next
// step, or comes while one is open, and an end of a step that is not the
// open one are invalid-event at /event/step, and change nothing
// (docs/contract.md section 7.2).
func TestApplyRefusesStepsOutOfOrder(t *testing.T) {
	for _, c := range []struct {
		name   string
		before []Event
		ev     *StepEvent
	}{
		{"first step is not 1", nil, &StepEvent{Step: 2, Status: StepStarted}},
		{"a step skipped", []Event{&StepEvent{Step: 1, Status: StepStarted}, &StepEvent{Step: 1, Status: StepFinished}}, &StepEvent{Step: 3, Status: StepStarted}},
		{"a step again", []Event{&StepEvent{Step: 1, Status: StepStarted}, &StepEvent{Step: 1, Status: StepFinished}}, &StepEvent{Step: 1, Status: StepStarted}},
		{"a start while one is open", []Event{&StepEvent{Step: 1, Status: StepStarted}}, &StepEvent{Step: 2, Status: StepStarted}},
		{"an end without a step", nil, &StepEvent{Step: 1, Status: StepFinished}},
		{"an end of another step", []Event{&StepEvent{Step: 1, Status: StepStarted}}, &StepEvent{Step: 2, Status: StepFailed}},
		{"a second end", []Event{&StepEvent{Step: 1, Status: StepStarted}, &StepEvent{Step: 1, Status: StepFinished}}, &StepEvent{Step: 1, Status: StepInterrupted}},
	} {
		s := NewChatStateV1("c-1")
		applyAll(t, s, env(1, &LifecycleEvent{Status: LifecycleStarted}))
		for i, ev := range c.before {
			applyAll(t, s, env(int64(i+2), ev))
		}
		before := stateJSON(t, s)
		err := s.Apply(env(int64(len(c.before)+2), c.ev))
		require.Error(t, err, c.name)
		assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err), c.name)
		assert.Equal(t, "/event/step", err.(*refusal.Error).Path, c.name)
		assert.Equal(t, before, stateJSON(t, s), c.name)
	}
}
