package agui_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// TestStepsAreSteps: a stepped turn's steps are STEP_STARTED and
// STEP_FINISHED named step-<n>, each text message ended before its step
// ends; a step still open at the run's end is finished before
// RUN_FINISHED (docs/contract.md section 18.2).
func TestStepsAreSteps(t *testing.T) {
	for _, open := range []bool{false, true} {
		f := newFixture(t, false)
		f.host.SetSteps(true, open)
		evs := events(t, f.post(t, "alice", input))
		want := []string{"RUN_STARTED", "STEP_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT",
			"TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "STEP_FINISHED", "TOOL_CALL_RESULT",
			"STEP_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "STEP_FINISHED", "RUN_FINISHED"}
		require.Equal(t, want, types(evs), "open %v", open)
		for i, name := range map[int]string{1: "step-1", 11: "step-1", 13: "step-2", 18: "step-2"} {
			assert.Equal(t, name, evs[i]["stepName"], "event %d", i)
		}
		assert.Nil(t, evs[1]["metadata"])
		assert.Equal(t, map[string]any{"chatprotocol": map[string]any{"reason": "tool_calls"}}, evs[11]["metadata"])
		if open {
			assert.Nil(t, evs[18]["metadata"], "the run's end finishes the open step, without an end of its own")
		} else {
			assert.Equal(t, map[string]any{"chatprotocol": map[string]any{"reason": "stop"}}, evs[18]["metadata"])
		}
	}
}

// TestAStepEndOtherThanFinishedSaysSo: a failed or interrupted step's
// STEP_FINISHED carries its status under metadata.chatprotocol.
func TestAStepEndOtherThanFinishedSaysSo(t *testing.T) {
	for _, status := range []string{"failed", "interrupted"} {
		turn, err := turnscript.Parse(replay.Key{ConversationID: "thread-1", TurnID: "t-1"},
			`{"type":"lifecycle","status":"started"}`, `{"type":"step","step":1,"status":"started"}`,
			`{"type":"step","step":1,"status":"`+status+`","reason":"provider-overloaded"}`, `{"type":"lifecycle","status":"completed"}`)
		require.NoError(t, err)
		body := string(bridge.Serve(t, turn))
		assert.Contains(t, body, `data: {"type":"STEP_FINISHED","stepName":"step-1","metadata":{"chatprotocol":{"status":"`+status+`","reason":"provider-overloaded"}}}`+"\n")
	}
}
