package uistream_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestStepsAreTheMessagesSteps: a stepped turn's step events are the
// message's steps (docs/contract.md section 18.1): the first model step
// takes the step opened at the turn's start, each end closes its text
// part and its step, and the tool result between two steps opens none.
func TestStepsAreTheMessagesSteps(t *testing.T) {
	f := newFixture(t, time.Millisecond, false, nil)
	f.host.SetSteps(true, false)
	assert.Equal(t, []string{
		`{"type":"start","messageId":"t-1"}`,
		`{"type":"start-step"}`,
		`{"type":"text-start","id":"text-3"}`,
		`{"type":"text-delta","id":"text-3","delta":"Refunds "}`,
		`{"type":"text-delta","id":"text-3","delta":"are "}`,
		`{"type":"text-delta","id":"text-3","delta":"accepted "}`,
		`{"type":"text-delta","id":"text-3","delta":"within "}`,
		`{"type":"text-end","id":"text-3"}`,
		`{"type":"tool-input-start","toolCallId":"t-1-call-1","toolName":"search_docs"}`,
		`{"type":"tool-input-available","toolCallId":"t-1-call-1","toolName":"search_docs","input":{"q":"refund policy"}}`,
		`{"type":"finish-step"}`,
		`{"type":"tool-output-available","toolCallId":"t-1-call-1","output":{"hits":2}}`,
		`{"type":"start-step"}`,
		`{"type":"text-start","id":"text-11"}`,
		`{"type":"text-delta","id":"text-11","delta":"30 "}`,
		`{"type":"text-delta","id":"text-11","delta":"days."}`,
		`{"type":"text-end","id":"text-11"}`,
		`{"type":"finish-step"}`,
		`{"type":"finish"}`,
		`[DONE]`,
	}, chunks(t, f.post(t, submit)))

	f = newFixture(t, time.Millisecond, false, nil)
	f.host.SetSteps(true, true)
	got := chunks(t, f.post(t, submit))
	assert.Equal(t, []string{`{"type":"text-end","id":"text-11"}`, `{"type":"finish-step"}`, `{"type":"finish"}`, `[DONE]`}, got[len(got)-4:],
		"a step still open at the end is closed once")
}
