package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// history is the conversation before the tests' turns.
var history = []agent.Message{{Role: agent.RoleUser, Text: "How long do refunds take?"}}

// Model, tool, model, answer: the loop runs the call the first step asked
// for under its call id, gives its result to the second step after the
// first step's message, and ends the turn completed with the summed usage
// and the last step's reason.
func TestModelToolModel(t *testing.T) {
	s := newStores(t)
	pr := s.process()
	var tools counter
	sc := &script{steps: []stepFunc{
		ask("Let me look. ", 10, call("call_1", "search", "refunds")),
		say("Refunds take 5 days.", 20),
	}}
	loop := &agent.Loop{Model: sc.model(), Tools: []agent.Tool{searchTool(tools.run)}, System: "Be brief."}
	out, err := loop.Run(t.Context(), pr.mustStart("t-1"), history)
	require.NoError(t, err)

	assert.Equal(t, chatprotocol.LifecycleCompleted, out.Status)
	assert.Equal(t, "end_turn", out.Reason)
	assert.Equal(t, 2, out.Steps)
	require.NotNil(t, out.Usage)
	assert.Equal(t, int64(30), *out.Usage.TotalTokens)
	assert.Nil(t, out.Failure)
	assert.Equal(t, int64(1), tools.total.Load())

	first := agent.Message{Role: agent.RoleAssistant, Text: "Let me look. ", Calls: []agent.Call{call("call_1", "search", "refunds")}}
	results := agent.Message{Role: agent.RoleTool, Results: []agent.Result{{CallID: "call_1", Name: "search",
		Output: json.RawMessage(`{"found":{"q":"refunds"}}`)}}}
	reqs := sc.requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, "Be brief.", reqs[0].System)
	assert.Equal(t, []agent.ToolSpec{{Name: "search", Description: "Searches the help center."}}, reqs[0].Tools)
	assert.Equal(t, history, reqs[0].Messages)
	assert.Equal(t, append(append([]agent.Message{}, history...), first, results), reqs[1].Messages)
	assert.Equal(t, []agent.Message{first, results, {Role: agent.RoleAssistant, Text: "Refunds take 5 days."}}, out.Messages)

	envs := s.envelopes("t-1")
	calls := of[*chatprotocol.ToolCallEvent](envs)
	require.Len(t, calls, 1)
	assert.Equal(t, "call_1", calls[0].CallID)
	res := of[*chatprotocol.ToolResultEvent](envs)
	require.Len(t, res, 1)
	assert.Equal(t, chatprotocol.ToolResultOK, res[0].Status)
	end := envs[len(envs)-1].Event.(*chatprotocol.LifecycleEvent)
	assert.Equal(t, chatprotocol.LifecycleCompleted, end.Status)
	assert.Equal(t, "end_turn", end.Reason)
	assert.Equal(t, int64(30), *end.Usage.TotalTokens)
	st := s.state("t-1")
	assert.Equal(t, "Let me look. Refunds take 5 days.", st.Turns[0].Text())
	ten, twenty := int64(10), int64(20)
	assert.Equal(t, []chatprotocol.StepState{
		{Step: 1, Status: chatprotocol.StepFinished, Reason: "tool_use", Usage: &chatprotocol.Usage{TotalTokens: &ten}},
		{Step: 2, Status: chatprotocol.StepFinished, Reason: "end_turn", Usage: &chatprotocol.Usage{TotalTokens: &twenty}},
	}, st.Turns[0].Steps)
}

// The calls of one step run concurrently, each under its own call id and
// the effect slot its announce took; their results reach the next step in
// call order, whatever order they finished in.
func TestParallelCalls(t *testing.T) {
	s := newStores(t)
	pr := s.process()
	started := make(chan string, 3)
	release := make(chan struct{})
	tool := func(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
		started <- string(input)
		select {
		case <-release:
		case <-ctx.Done():
			return nil, &turn.ToolError{Status: chatprotocol.ToolResultCancelled}
		}
		return json.RawMessage(`{"for":` + string(input) + `}`), nil
	}
	sc := &script{steps: []stepFunc{
		ask("", 1, call("a", "search", "1"), call("b", "search", "2"), call("c", "search", "3")),
		say("Done.", 1),
	}}
	loop := &agent.Loop{Model: sc.model(), Tools: []agent.Tool{searchTool(tool)}}
	done := make(chan agent.Outcome, 1)
	go func() {
		out, err := loop.Run(t.Context(), pr.mustStart("t-1"), history)
		assert.NoError(t, err)
		done <- out
	}()
	for range 3 { // all three run at once: none returns before the three started
		within(t, started)
	}
	close(release)
	out := within(t, done)
	assert.Equal(t, chatprotocol.LifecycleCompleted, out.Status)

	reqs := sc.requests()
	require.Len(t, reqs, 2)
	tm := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, agent.RoleTool, tm.Role)
	require.Len(t, tm.Results, 3)
	for i, id := range []string{"a", "b", "c"} {
		assert.Equal(t, id, tm.Results[i].CallID)
		assert.JSONEq(t, `{"for":{"q":"`+string(rune('1'+i))+`"}}`, string(tm.Results[i].Output))
	}
	// The k-th announced call is the effect tool-k.
	rec, err := s.store.LoadTurn(t.Context(), refOf("t-1"))
	require.NoError(t, err)
	for i, q := range []string{"1", "2", "3"} {
		e := effect(t, rec, i+1)
		assert.JSONEq(t, `{"status":"ok","output":{"for":{"q":"`+q+`"}}}`, string(e.Result.Data))
	}
	var ids []string
	for _, c := range of[*chatprotocol.ToolCallEvent](s.envelopes("t-1")) {
		ids = append(ids, c.CallID)
	}
	assert.Equal(t, []string{"a", "b", "c"}, ids)
}

// A tool's definite error and a call of an unknown tool are answered to
// the model as error results, on the stream as tool_result error; the turn
// goes on.
func TestToolErrorAndUnknownTool(t *testing.T) {
	s := newStores(t)
	pr := s.process()
	failing := func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return nil, &turn.ToolError{Status: chatprotocol.ToolResultError, Output: json.RawMessage(`{"error":"index offline"}`)}
	}
	sc := &script{steps: []stepFunc{
		ask("", 1, call("a", "search", "x"), call("b", "wander", "y")),
		say("Sorry.", 1),
	}}
	loop := &agent.Loop{Model: sc.model(), Tools: []agent.Tool{searchTool(failing)}}
	out, err := loop.Run(t.Context(), pr.mustStart("t-1"), history)
	require.NoError(t, err)
	assert.Equal(t, chatprotocol.LifecycleCompleted, out.Status)

	reqs := sc.requests()
	require.Len(t, reqs, 2)
	tm := reqs[1].Messages[len(reqs[1].Messages)-1]
	assert.Equal(t, []agent.Result{
		{CallID: "a", Name: "search", Output: json.RawMessage(`{"error":"index offline"}`), IsError: true},
		{CallID: "b", Name: "wander", Output: json.RawMessage(`{"error":"unknown tool: wander"}`), IsError: true},
	}, tm.Results)
	res := of[*chatprotocol.ToolResultEvent](s.envelopes("t-1"))
	require.Len(t, res, 2)
	for _, r := range res {
		assert.Equal(t, chatprotocol.ToolResultError, r.Status)
	}
}

// A tool whose outcome is unknown stops the loop: the call needs
// reconciliation, is never run again, and the turn fails with
// agent-tool-outcome-unknown after lifecycle needs-reconciliation.
func TestUnknownOutcomeStops(t *testing.T) {
	s := newStores(t)
	pr := s.process()
	var launches atomic.Int64
	lost := func(context.Context, json.RawMessage) (json.RawMessage, error) {
		launches.Add(1)
		return nil, errors.New("connection reset")
	}
	sc := &script{steps: []stepFunc{ask("", 1, call("a", "search", "x")), say("never", 1)}}
	loop := &agent.Loop{Model: sc.model(), Tools: []agent.Tool{searchTool(lost)}, Retry: fast}
	out, err := loop.Run(t.Context(), pr.mustStart("t-1"), history)
	require.NoError(t, err)
	assert.Equal(t, chatprotocol.LifecycleFailed, out.Status)
	require.NotNil(t, out.Failure)
	assert.Equal(t, agent.CodeUnknownOutcome, out.Failure.Code)
	assert.Equal(t, int64(1), launches.Load())
	assert.Len(t, sc.requests(), 1)
	envs := s.envelopes("t-1")
	tl := types(envs)
	assert.Contains(t, tl, "lifecycle:needs-reconciliation")
	assert.Equal(t, []string{"error", "lifecycle:failed"}, tl[len(tl)-2:])
	assert.Equal(t, agent.CodeUnknownOutcome, of[*chatprotocol.ErrorEvent](envs)[0].Code)
}

// At the step limit the last step's calls are answered cancelled, never
// run, and the turn fails with agent-step-limit.
func TestStepLimit(t *testing.T) {
	s := newStores(t)
	pr := s.process()
	var tools counter
	sc := &script{steps: []stepFunc{
		ask("", 1, call("a", "search", "1")),
		ask("", 1, call("b", "search", "2")),
	}}
	loop := &agent.Loop{Model: sc.model(), Tools: []agent.Tool{searchTool(tools.run)}, MaxSteps: 2}
	out, err := loop.Run(t.Context(), pr.mustStart("t-1"), history)
	require.NoError(t, err)
	assert.Equal(t, chatprotocol.LifecycleFailed, out.Status)
	assert.Equal(t, agent.CodeStepLimit, out.Failure.Code)
	assert.Equal(t, 2, out.Steps)
	assert.Equal(t, int64(1), tools.total.Load(), "the second step's call never ran")
	envs := s.envelopes("t-1")
	res := of[*chatprotocol.ToolResultEvent](envs)
	require.Len(t, res, 2)
	assert.Equal(t, chatprotocol.ToolResultOK, res[0].Status)
	assert.Equal(t, chatprotocol.ToolResultCancelled, res[1].Status)
	ev := of[*chatprotocol.ErrorEvent](envs)
	require.Len(t, ev, 1)
	assert.Equal(t, agent.CodeStepLimit, ev[0].Code)
	assert.False(t, ev[0].Retryable)
	assert.Equal(t, "tool_use", envs[len(envs)-1].Event.(*chatprotocol.LifecycleEvent).Reason)
}

// failOnce fails the step with code the first time, after text when it is
// not "", then plays next.
func failOnce(code chatprotocol.ErrorCode, text string, next stepFunc) stepFunc {
	var failed atomic.Bool
	return func(ctx context.Context, req *agent.Request, sink ingest.Sink) error {
		if failed.CompareAndSwap(false, true) {
			if text != "" {
				if err := sink.Delta(ctx, text); err != nil {
					return err
				}
			}
			return sink.Fail(ctx, code, "overloaded", ingest.Retryable(code, text != ""))
		}
		return next(ctx, req, sink)
	}
}

// A step that failed transiently before any output is retried; after
// output, or for a failure that is not transient, the turn fails with the
// step's failure; retries are bounded.
func TestStepRetry(t *testing.T) {
	t.Run("transient before output", func(t *testing.T) {
		s := newStores(t)
		sc := &script{steps: []stepFunc{failOnce(ingest.CodeOverloaded, "", say("Hello.", 5))}}
		out, err := (&agent.Loop{Model: sc.model(), Retry: fast}).Run(t.Context(), s.process().mustStart("t-1"), history)
		require.NoError(t, err)
		assert.Equal(t, chatprotocol.LifecycleCompleted, out.Status)
		assert.Equal(t, 1, out.Steps)
		assert.Len(t, sc.requests(), 2)
		st := s.state("t-1")
		assert.Equal(t, "Hello.", st.Turns[0].Text())
		require.Len(t, st.Turns[0].Steps, 2, "the failed step, then its retry")
		assert.Equal(t, chatprotocol.StepFailed, st.Turns[0].Steps[0].Status)
		assert.Equal(t, string(ingest.CodeOverloaded), st.Turns[0].Steps[0].Reason)
		assert.Equal(t, chatprotocol.StepFinished, st.Turns[0].Steps[1].Status)
	})
	t.Run("after output", func(t *testing.T) {
		s := newStores(t)
		sc := &script{steps: []stepFunc{failOnce(ingest.CodeOverloaded, "Hel", say("Hello.", 5))}}
		out, err := (&agent.Loop{Model: sc.model(), Retry: fast}).Run(t.Context(), s.process().mustStart("t-1"), history)
		require.NoError(t, err)
		assert.Equal(t, chatprotocol.LifecycleFailed, out.Status)
		assert.Equal(t, ingest.CodeOverloaded, out.Failure.Code)
		assert.Len(t, sc.requests(), 1)
		ev := of[*chatprotocol.ErrorEvent](s.envelopes("t-1"))
		require.Len(t, ev, 1)
		assert.Equal(t, ingest.CodeOverloaded, ev[0].Code)
		assert.False(t, ev[0].Retryable)
	})
	t.Run("not transient", func(t *testing.T) {
		s := newStores(t)
		sc := &script{steps: []stepFunc{failOnce(ingest.CodeRefusal, "", say("Hello.", 5))}}
		out, err := (&agent.Loop{Model: sc.model(), Retry: fast}).Run(t.Context(), s.process().mustStart("t-1"), history)
		require.NoError(t, err)
		assert.Equal(t, ingest.CodeRefusal, out.Failure.Code)
		assert.Len(t, sc.requests(), 1)
	})
	t.Run("step left open", func(t *testing.T) { // the model returned without ending its step
		s := newStores(t)
		var once atomic.Bool
		sc := &script{steps: []stepFunc{func(ctx context.Context, req *agent.Request, sink ingest.Sink) error {
			if once.CompareAndSwap(false, true) {
				return sink.Provenance(ctx, "test", "m-1", "")
			}
			return say("Hello.", 5)(ctx, req, sink)
		}}}
		out, err := (&agent.Loop{Model: sc.model(), Retry: fast}).Run(t.Context(), s.process().mustStart("t-1"), history)
		require.NoError(t, err)
		assert.Equal(t, chatprotocol.LifecycleCompleted, out.Status)
		steps := s.state("t-1").Turns[0].Steps
		require.Len(t, steps, 2)
		assert.Equal(t, chatprotocol.StepState{Step: 1, Status: chatprotocol.StepFailed, Reason: string(ingest.CodeStreamCut)}, steps[0])
	})
	t.Run("model error", func(t *testing.T) { // not a provider's failure: the turn fails, internal
		s := newStores(t)
		sc := &script{steps: []stepFunc{func(context.Context, *agent.Request, ingest.Sink) error { return errors.New("bug") }}}
		out, err := (&agent.Loop{Model: sc.model(), Retry: fast}).Run(t.Context(), s.process().mustStart("t-1"), history)
		require.NoError(t, err)
		assert.Equal(t, chatprotocol.LifecycleFailed, out.Status)
		assert.Equal(t, chatprotocol.ErrorCode("internal"), out.Failure.Code)
		assert.Len(t, sc.requests(), 1)
		st := s.state("t-1").Turns[0]
		assert.Equal(t, chatprotocol.StepInterrupted, st.Steps[0].Status, "End ends the open step")
	})
	t.Run("bounded", func(t *testing.T) {
		s := newStores(t)
		var calls atomic.Int64
		always := func(ctx context.Context, _ *agent.Request, sink ingest.Sink) error {
			calls.Add(1)
			return sink.Fail(ctx, ingest.CodeServerError, "down", true)
		}
		sc := &script{steps: []stepFunc{always}}
		out, err := (&agent.Loop{Model: sc.model(), Retry: agent.Retry{Attempts: 3, Base: fast.Base, Max: fast.Max}}).Run(t.Context(), s.process().mustStart("t-1"), history)
		require.NoError(t, err)
		assert.Equal(t, chatprotocol.LifecycleFailed, out.Status)
		assert.Equal(t, ingest.CodeServerError, out.Failure.Code)
		assert.Equal(t, int64(4), calls.Load(), "the step and three retries")
		assert.Equal(t, 0, out.Steps)
	})
}

// The turn's cancellation ends the model's request mid-step, and a running
// tool mid-call; the turn ends cancelled.
func TestCancel(t *testing.T) {
	t.Run("mid-step", func(t *testing.T) {
		s := newStores(t)
		pr := s.process()
		streaming := make(chan struct{})
		var cause atomic.Value
		blocked := func(ctx context.Context, _ *agent.Request, sink ingest.Sink) error {
			if err := sink.Delta(ctx, "Let me "); err != nil {
				return err
			}
			close(streaming)
			<-ctx.Done()
			cause.Store(context.Cause(ctx))
			return ctx.Err()
		}
		sc := &script{steps: []stepFunc{blocked}}
		done := make(chan agent.Outcome, 1)
		go func() {
			out, err := (&agent.Loop{Model: sc.model()}).Run(t.Context(), pr.mustStart("t-1"), history)
			assert.NoError(t, err)
			done <- out
		}()
		within(t, streaming)
		pr.cancel("t-1")
		out := within(t, done)
		assert.Equal(t, chatprotocol.LifecycleCancelled, out.Status)
		assert.ErrorIs(t, cause.Load().(error), turn.ErrCancelled)
		envs := s.envelopes("t-1")
		assert.Equal(t, "lifecycle:cancelled", types(envs)[len(envs)-1])
		assert.Equal(t, "Let me ", s.state("t-1").Turns[0].Text())
	})
	t.Run("mid-tool", func(t *testing.T) {
		s := newStores(t)
		pr := s.process()
		running := make(chan struct{})
		var toolCause atomic.Value
		tool := func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
			close(running)
			<-ctx.Done()
			toolCause.Store(context.Cause(ctx))
			return nil, &turn.ToolError{Status: chatprotocol.ToolResultCancelled}
		}
		sc := &script{steps: []stepFunc{ask("", 1, call("a", "search", "x")), say("never", 1)}}
		done := make(chan agent.Outcome, 1)
		go func() {
			out, err := (&agent.Loop{Model: sc.model(), Tools: []agent.Tool{searchTool(tool)}}).Run(t.Context(), pr.mustStart("t-1"), history)
			assert.NoError(t, err)
			done <- out
		}()
		within(t, running)
		pr.cancel("t-1")
		out := within(t, done)
		assert.Equal(t, chatprotocol.LifecycleCancelled, out.Status)
		assert.ErrorIs(t, toolCause.Load().(error), turn.ErrCancelled)
		assert.Len(t, sc.requests(), 1)
		res := of[*chatprotocol.ToolResultEvent](s.envelopes("t-1"))
		require.Len(t, res, 1)
		assert.Equal(t, chatprotocol.ToolResultCancelled, res[0].Status)
	})
}
