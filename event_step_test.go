package chatprotocol

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// TestStepEventReadsAndWritesCanonically: a step event's members are read
// in any order and written in the canonical one, unknown members kept.
func TestStepEventReadsAndWritesCanonically(t *testing.T) {
	env, err := ParseEnvelope([]byte(frame(`{"usage":{"totalTokens":40},"reason":"tool_use","x":[1],"status":"finished","step":3,"type":"step"}`)))
	require.NoError(t, err)
	ev, ok := env.Event.(*StepEvent)
	require.True(t, ok)
	assert.Equal(t, int64(3), ev.Step)
	assert.Equal(t, StepFinished, ev.Status)
	assert.Equal(t, "tool_use", ev.Reason)
	assert.Equal(t, int64(40), *ev.Usage.TotalTokens)
	out, err := env.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, frame(`{"type":"step","step":3,"status":"finished","reason":"tool_use","usage":{"totalTokens":40},"x":[1]}`), string(out))

	b, err := (&StepEvent{Step: MaxSeq, Status: StepStarted}).MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"type":"step","step":9007199254740991,"status":"started"}`, string(b))
}

// TestStepEventRefusals: a step event outside section 6.1 is refused by
// the parser and by the writer with invalid-event at the member.
func TestStepEventRefusals(t *testing.T) {
	for _, c := range []struct {
		name, event string
		code        refusal.Code
		path        string
	}{
		{"no step", `{"type":"step","status":"started"}`, refusal.CodeInvalidEvent, "/event/step"},
		{"step zero", `{"type":"step","step":0,"status":"started"}`, refusal.CodeInvalidEvent, "/event/step"},
		{"step negative", `{"type":"step","step":-1,"status":"started"}`, refusal.CodeInvalidEvent, "/event/step"},
		{"step beyond 2^53-1", `{"type":"step","step":9007199254740992,"status":"started"}`, refusal.CodeInvalidEvent, "/event/step"},
		{"step fraction", `{"type":"step","step":1.5,"status":"started"}`, refusal.CodeInvalidEvent, "/event/step"},
		{"step string", `{"type":"step","step":"1","status":"started"}`, refusal.CodeInvalidEvent, "/event/step"},
		{"no status", `{"type":"step","step":1}`, refusal.CodeInvalidEvent, "/event/status"},
		{"unknown status", `{"type":"step","step":1,"status":"completed"}`, refusal.CodeInvalidEvent, "/event/status"},
		{"reason not a string", `{"type":"step","step":1,"status":"finished","reason":7}`, refusal.CodeInvalidEvent, "/event/reason"},
		{"negative tokens", `{"type":"step","step":1,"status":"finished","usage":{"totalTokens":-1}}`, refusal.CodeInvalidEvent, "/event/usage/totalTokens"},
		{"case variant", `{"type":"step","step":1,"Step":2,"status":"started"}`, refusal.CodeInvalidEnvelope, "/event/Step"},
	} {
		_, err := ParseEnvelope([]byte(frame(c.event)))
		require.Error(t, err, c.name)
		assert.Equal(t, c.code, refusal.CodeOf(err), c.name)
		assert.Equal(t, c.path, err.(*refusal.Error).Path, c.name)
	}
	for _, c := range []struct {
		name string
		ev   *StepEvent
		path string
	}{
		{"step zero", &StepEvent{Status: StepStarted}, "/step"},
		{"step beyond", &StepEvent{Step: MaxSeq + 1, Status: StepStarted}, "/step"},
		{"no status", &StepEvent{Step: 1}, "/status"},
		{"unknown status", &StepEvent{Step: 1, Status: "paused"}, "/status"},
	} {
		_, err := c.ev.MarshalJSON()
		require.Error(t, err, c.name)
		assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err), c.name)
		assert.Equal(t, c.path, err.(*refusal.Error).Path, c.name)
	}
}

func TestStepStatuses(t *testing.T) {
	ends := map[StepStatus]bool{StepStarted: false, StepFinished: true, StepFailed: true, StepInterrupted: true}
	for s, end := range ends {
		assert.True(t, s.Valid(), s)
		assert.Equal(t, end, s.Ends(), s)
	}
	assert.False(t, StepStatus("completed").Valid())
	assert.False(t, StepStatus("").Ends())
}
