package ingest_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// readStep reads the recorded body name of kind into one step of pt's
// turn, started first, and returns the step.
func (pt *producerTurn) readStep(t *testing.T, kind ingest.Kind, name string) *ingest.Step {
	t.Helper()
	n, err := pt.p.StartStep(t.Context())
	require.NoError(t, err)
	body, err := os.Open("../testdata/providers/" + string(kind) + "/" + name)
	require.NoError(t, err)
	defer body.Close()
	s := ingest.StepSink(pt.p)
	require.NoError(t, ingest.Read(t.Context(), kind, body, s, nil))
	assert.Equal(t, int64(0), pt.p.OpenStep(), "step %d ended", n)
	return s
}

// events returns the turn's events, parsed, and whether the window says
// it ended.
func (pt *producerTurn) events(t *testing.T) ([]chatprotocol.Event, bool) {
	t.Helper()
	b, err := pt.window.Bounds(t.Context(), pt.key)
	require.NoError(t, err)
	_, frames, err := pt.window.Read(t.Context(), pt.key, 0, replay.DefaultPageBytes)
	require.NoError(t, err)
	var out []chatprotocol.Event
	for _, f := range frames {
		env, err := chatprotocol.ParseEnvelope(f.Data)
		require.NoError(t, err)
		out = append(out, env.Event)
	}
	return out, b.Ended
}

// A StepSink writes one provider response as one step: provenance, text
// and tool calls into the turn, and the step's end with the stop reason
// and usage; the turn goes on. The step tells its text, calls, reason and
// usage after.
func TestStepSinkDrivesOneStep(t *testing.T) {
	pt := startTurn(t)
	s := pt.readStep(t, ingest.AnthropicMessages, "tool-use.sse")
	assert.Equal(t, "Okay, let's check the weather for San Francisco, CA:", s.Text())
	assert.Equal(t, []turn.ToolCall{{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather",
		Input: []byte(`{"location":"San Francisco, CA","unit":"fahrenheit"}`)}}, s.Calls())
	assert.Equal(t, "tool_use", s.Reason())
	require.NotNil(t, s.Consumed())
	assert.Equal(t, int64(561), *s.Consumed().TotalTokens)
	assert.Nil(t, s.Failure())
	assert.True(t, s.Emitted())

	evs, ended := pt.events(t)
	assert.False(t, ended, "a step never ends the turn")
	types := make([]string, len(evs))
	for i, ev := range evs {
		types[i] = ev.EventType()
	}
	assert.Equal(t, []string{"lifecycle", "step", "provenance", "delta", "tool_call", "step"}, types)
	end := evs[5].(*chatprotocol.StepEvent)
	assert.Equal(t, int64(1), end.Step)
	assert.Equal(t, chatprotocol.StepFinished, end.Status)
	assert.Equal(t, "tool_use", end.Reason)
	assert.Equal(t, int64(561), *end.Usage.TotalTokens)

	s2 := pt.readStep(t, ingest.AnthropicMessages, "text.sse")
	assert.Empty(t, s2.Calls())
	require.NoError(t, pt.p.Complete(t.Context()))
	env, status := pt.end(t)
	assert.Equal(t, string(chatprotocol.LifecycleCompleted), string(status))
	assert.Equal(t, int64(561)+*s2.Consumed().TotalTokens, *env.Event.(*chatprotocol.LifecycleEvent).Usage.TotalTokens,
		"the turn's usage is the sum of its steps'")
}

// A provider failure fails the step, not the turn: the step keeps the
// failure (retryable by the rule of Retryable) and ends failed with the
// code as its reason; no error event is written.
func TestStepSinkKeepsTheFailure(t *testing.T) {
	pt := startTurn(t)
	s := pt.readStep(t, ingest.AnthropicMessages, "overloaded-before-delta.sse")
	require.NotNil(t, s.Failure())
	assert.Equal(t, ingest.CodeOverloaded, s.Failure().Code)
	assert.Equal(t, "overloaded_error: Overloaded", s.Failure().Message)
	assert.True(t, s.Failure().Retryable)
	assert.False(t, s.Emitted())
	assert.Equal(t, string(ingest.CodeOverloaded), s.Reason())
	evs, ended := pt.events(t)
	assert.False(t, ended)
	assert.Len(t, evs, 4)
	end := evs[3].(*chatprotocol.StepEvent)
	assert.Equal(t, chatprotocol.StepFailed, end.Status)
	assert.Equal(t, string(ingest.CodeOverloaded), end.Reason)

	s = pt.readStep(t, ingest.AnthropicMessages, "overloaded-after-delta.sse")
	require.NotNil(t, s.Failure())
	assert.False(t, s.Failure().Retryable, "a step that sent text is not retried")
	assert.True(t, s.Emitted())
}

// A StepSink does not start its step: without one open, the step's end is
// refused with invalid-event, and the reader returns it.
func TestStepSinkNeedsAnOpenStep(t *testing.T) {
	pt := startTurn(t)
	body, err := os.Open("../testdata/providers/anthropic-messages/text.sse")
	require.NoError(t, err)
	defer body.Close()
	err = ingest.Read(t.Context(), ingest.AnthropicMessages, body, ingest.StepSink(pt.p), nil)
	assert.Equal(t, refusal.CodeInvalidEvent, refusal.CodeOf(err))
	_, ended := pt.events(t)
	assert.False(t, ended)
}
