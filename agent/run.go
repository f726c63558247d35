package agent

import (
	"context"
	"errors"
	"log/slog"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/patience"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// run is one [Loop.Run]: the turn's conversation so far and where its
// steps stand.
type run struct {
	l       *Loop
	p       *turn.Producer
	ctx     context.Context // the host's
	work    context.Context // ends with p's Context or ctx: the model steps run under it
	history int             // the messages before the turn's
	msgs    []Message       // history, then the turn's
	req     Request         // the steps' request, its Messages set before each

	steps    int               // the turn's model steps, retried ones not counted
	failures int               // the steps that failed in a row
	answered bool              // the last step finished without asking for a tool
	open     []Call            // the last step's calls, to answer before the next step
	known    map[string]Result // results on the stream of a resumed turn, by call id
	reason   string            // the last step's stop reason
	failed   *turn.Failure     // a resumed turn's last step failed for good
}

// loop runs steps and their calls until the turn ends or pauses.
func (r *run) loop() (Outcome, error) {
	if err := r.resume(); err != nil {
		return r.stop(err)
	}
	if r.failed != nil {
		return r.end(r.failed)
	}
	limit := r.l.MaxSteps
	if limit <= 0 {
		limit = DefaultMaxSteps
	}
	for {
		switch {
		case r.work.Err() != nil:
			return r.stop(context.Cause(r.work))
		case r.answered:
			return r.end(nil)
		case r.steps >= limit:
			return r.limit()
		}
		if len(r.open) > 0 {
			cards, err := r.answer(r.open)
			if err != nil {
				return r.stop(err)
			}
			if len(cards) > 0 {
				return r.pause(cards, "waiting for a person's answer")
			}
		}
		if err := r.step(); err != nil {
			return r.stop(err)
		}
	}
}

// step runs one model step; a failed step is retried, after its delay,
// by the next call, or returned as the turn's failure.
func (r *run) step() error {
	p := r.p
	n, err := p.StartStep(r.work)
	if err != nil {
		return err
	}
	if r.req.Tools == nil && len(r.l.Tools) > 0 {
		r.req.Tools = make([]ToolSpec, len(r.l.Tools))
		for i, t := range r.l.Tools {
			r.req.Tools[i] = t.Spec
		}
	}
	r.req.System, r.req.Messages = r.l.System, r.msgs
	sink := ingest.StepSink(p)
	reply, err := r.l.Model.Step(r.work, &r.req, sink)
	if err != nil {
		return err
	}
	f := sink.Failure()
	if f == nil && p.OpenStep() == n { // the model returned without ending its step
		f = &turn.Failure{Code: ingest.CodeStreamCut, Message: "the model's step ended without its end",
			Retryable: !sink.Emitted()}
		if err := p.FinishStep(r.work, turn.StepEnd{Status: chatprotocol.StepFailed, Reason: string(f.Code), Usage: sink.Consumed()}); err != nil {
			return err
		}
	}
	if f != nil {
		if !ingest.Retryable(f.Code, sink.Emitted()) || r.failures >= r.l.Retry.attempts() {
			return f
		}
		r.failures++
		delay := r.l.Retry.delay(r.failures)
		r.logf(r.work, slog.LevelInfo, "agent: model step retried", slog.Int64("step", n),
			slog.String("code", string(f.Code)), slog.Int("retry", r.failures), slog.Duration("after", delay))
		return patience.Pause(r.work, delay)
	}
	r.failures = 0
	var calls []Call
	if tcs := sink.Calls(); len(tcs) > 0 {
		calls = make([]Call, len(tcs))
		for i, tc := range tcs {
			calls[i] = Call(tc)
		}
	}
	r.msgs = append(r.msgs, Message{Role: RoleAssistant, Text: sink.Text(), Calls: calls, Reasoning: reply.Reasoning})
	r.steps++
	r.reason = sink.Reason()
	r.open = calls
	r.answered = len(calls) == 0
	return nil
}

// resume rebuilds the conversation of a turn that has steps from its
// stream (docs/contract.md section 19.4), after ending its open step
// interrupted.
func (r *run) resume() error {
	p := r.p
	if p.Steps() == 0 {
		return nil
	}
	if p.OpenStep() != 0 {
		if err := p.FinishStep(r.work, turn.StepEnd{Status: chatprotocol.StepInterrupted, Reason: "the turn resumed"}); err != nil {
			return err
		}
	}
	t, err := readTranscript(r.work, p.Window(), p.Key())
	if err != nil {
		return err
	}
	r.known = t.results
	for _, s := range t.steps {
		if !s.kept() { // failed: retried, or the turn's failure
			r.failures++
			code := chatprotocol.ErrorCode(s.reason)
			if !ingest.Retryable(code, s.emitted) || r.failures > r.l.Retry.attempts() {
				r.failed = &turn.Failure{Code: code, Message: "the model's step failed"}
			}
			continue
		}
		r.flush()
		r.failures, r.failed = 0, nil
		r.msgs = append(r.msgs, s.message())
		r.steps++
		r.reason = s.reason
		r.open = s.calls
		r.answered = s.status == chatprotocol.StepFinished && len(s.calls) == 0
	}
	return nil
}

// flush adds the results on the stream of the open calls of a resumed
// turn's earlier step, a call without one answered as an error.
func (r *run) flush() {
	if len(r.open) == 0 {
		return
	}
	res := make([]Result, len(r.open))
	for i, c := range r.open {
		known, ok := r.known[c.ID]
		if !ok {
			known = Result{CallID: c.ID, Output: errorOutput("the call has no result"), IsError: true}
		}
		known.Name = c.Name
		res[i] = known
	}
	r.msgs = append(r.msgs, Message{Role: RoleTool, Results: res})
	r.open = nil
}

// limit ends a turn at its step limit: the open calls are answered
// cancelled, never run, and the turn fails with [CodeStepLimit].
func (r *run) limit() (Outcome, error) {
	if len(r.open) > 0 {
		stop := refuse(chatprotocol.ToolResultCancelled, "the turn reached its step limit")
		for _, c := range r.open {
			if _, ok := r.known[c.ID]; ok {
				continue
			}
			if _, err := r.p.RunToolCall(r.p.Context(), turn.ToolCall{ID: c.ID, Name: c.Name, Input: c.Input}, stop); err != nil {
				return r.stop(err)
			}
		}
	}
	return r.end(&turn.Failure{Code: CodeStepLimit, Message: "the model asked for tools after its last allowed step"})
}

// stop ends the turn after err stopped the loop: cancelled when the
// turn's cancellation reached it, interrupted when ctx ended, failed
// otherwise; a turn another writer took over is left alone.
func (r *run) stop(err error) (Outcome, error) {
	cause := context.Cause(r.p.Context())
	switch {
	case errors.Is(err, turn.ErrAnotherWriter), errors.Is(cause, turn.ErrAnotherWriter):
		r.logf(r.ctx, slog.LevelWarn, "agent: another writer took the turn over", slog.Any("err", err))
		return r.outcome(""), err
	case errors.Is(cause, turn.ErrCancelled):
		return r.end(nil)
	case r.ctx.Err() != nil:
		return r.pause(nil, "the host stopped the turn")
	case errors.Is(err, refusal.ErrClaimConflict):
		// Another worker's claim of a call: its lease decides, not this run.
		o, perr := r.pause(nil, "a tool call is claimed by another worker")
		return o, errors.Join(err, perr)
	case errors.Is(err, refusal.ErrNeedsReconciliation):
		err = &turn.Failure{Code: CodeUnknownOutcome, Message: "a tool call's outcome is unknown", Err: err}
	}
	return r.end(err)
}

// end ends the turn with the last step's reason (the Producer sums the
// steps' usage):
// completed for a nil cause, failed otherwise, cancelled when the turn's
// cancellation committed.
func (r *run) end(cause error) (Outcome, error) {
	p := r.p
	p.SetReason(r.reason)
	if err := p.End(r.lasting(), cause); err != nil {
		r.logf(r.ctx, slog.LevelError, "agent: the turn's end failed", slog.Any("err", err), slog.Any("cause", cause))
		return r.outcome(""), err
	}
	switch {
	case errors.Is(context.Cause(p.Context()), turn.ErrCancelled):
		return r.outcome(chatprotocol.LifecycleCancelled), nil
	case cause == nil:
		return r.outcome(chatprotocol.LifecycleCompleted), nil
	}
	o := r.outcome(chatprotocol.LifecycleFailed)
	o.Failure = failure(cause)
	return o, nil
}

// pause leaves the turn interrupted, its open step ended interrupted:
// cards wait for a person, or the host stopped the run.
func (r *run) pause(cards []string, reason string) (Outcome, error) {
	ctx := r.lasting()
	if r.p.OpenStep() != 0 {
		if err := r.p.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepInterrupted, Reason: reason}); err != nil {
			return r.outcome(""), err
		}
	}
	if err := r.p.Interrupt(ctx, reason); err != nil {
		return r.outcome(""), err
	}
	o := r.outcome(chatprotocol.LifecycleInterrupted)
	o.Cards = cards
	return o, nil
}

// lasting is the host's ctx without its end: the turn's end and pause
// are written also after ctx ended.
func (r *run) lasting() context.Context {
	if r.ctx.Done() == nil {
		return r.ctx
	}
	return context.WithoutCancel(r.ctx)
}

// logf logs a record to the Loop's Logger, if any.
func (r *run) logf(ctx context.Context, level slog.Level, msg string, attrs ...slog.Attr) {
	if r.l.Logger != nil {
		r.l.Logger.LogAttrs(ctx, level, msg, attrs...)
	}
}

// outcome is the run's Outcome with status.
func (r *run) outcome(status chatprotocol.LifecycleStatus) Outcome {
	return Outcome{Status: status, Reason: r.reason, Steps: r.steps, Usage: r.p.Usage(), Messages: r.msgs[r.history:]}
}

// failure is what the error event of a turn ended with cause says: its
// [*turn.Failure], or its refusal code (internal without one).
func failure(cause error) *turn.Failure {
	if f, ok := errors.AsType[*turn.Failure](cause); ok {
		return f
	}
	code := chatprotocol.ErrorCode(refusal.CodeOf(cause))
	if code == "" {
		code = chatprotocol.ErrorCode(refusal.CodeInternal)
	}
	return &turn.Failure{Code: code, Message: "the turn failed", Err: cause}
}
