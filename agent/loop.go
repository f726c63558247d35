package agent

import (
	"context"
	"errors"
	"log/slog"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// DefaultMaxSteps is the number of model steps a turn may take when
// [Loop].MaxSteps is 0.
const DefaultMaxSteps = 16

// CodeStepLimit is the error code of a turn that reached [Loop].MaxSteps
// with its model still asking for tools (docs/contract.md section 19.5):
// not retryable.
const CodeStepLimit chatprotocol.ErrorCode = "agent-step-limit"

// CodeUnknownOutcome is the error code of a turn a tool call stopped with
// an unknown outcome: the call needs reconciliation (docs/contract.md
// sections 13.1 and 19.5); not retryable.
const CodeUnknownOutcome chatprotocol.ErrorCode = "agent-tool-outcome-unknown"

// Loop runs an agent's turn (docs/contract.md section 19.2): model steps
// and the tool calls they ask for, one step after the other, until the
// model answers without asking for a tool. A Loop is configuration: it is
// safe for concurrent use by any number of turns, and is not changed by
// Run.
type Loop struct {
	// Model streams each step. Required.
	Model Model
	// Tools are the tools the model may call, offered in this order; a
	// name appears once.
	Tools []Tool
	// System is the host's instructions to the model; "" for none.
	System string
	// MaxSteps bounds the model steps of a turn (retried ones not
	// counted); 0 means [DefaultMaxSteps].
	MaxSteps int
	// Retry bounds the retries of a failed step; the zero value means
	// [DefaultRetry].
	Retry Retry
	// Logger receives a record per retried step and per stop that is not
	// the turn's end; nil means none.
	Logger *slog.Logger
}

// Outcome is how a [Loop.Run] left the turn.
type Outcome struct {
	// Status is the turn's lifecycle on the stream when Run returned:
	// completed, failed or cancelled (the turn ended), or interrupted
	// (cards wait for a person, or ctx ended; start a Producer on the same
	// turn and Run again to go on). "" when Run could not write it (its
	// error says why).
	Status chatprotocol.LifecycleStatus
	// Reason is the last step's stop reason, the terminal lifecycle's.
	Reason string
	// Failure is what a failed turn's error event says; nil otherwise.
	Failure *turn.Failure
	// Steps is the number of model steps the turn has taken, counting
	// those of earlier runs of a resumed turn, retried ones not counted.
	Steps int
	// Usage is the sum of the steps' usage; nil when no step reported one.
	Usage *chatprotocol.Usage
	// Cards are the correlation ids of the cards the turn waits for, in
	// call order, when it was interrupted for them.
	Cards []string
	// Messages are the turn's messages: an assistant message per step and
	// a tool message with the results of each step's calls; a host adds
	// them to its history for the next turn.
	Messages []Message
}

// Run runs the turn p produces (docs/contract.md section 19.2): history
// is the conversation before it (earlier turns and this turn's user
// message, oldest first). Each step opens with [turn.Producer.StartStep]
// and streams through [ingest.StepSink] (its [Request] is the run's own,
// read during Step only); the calls it announced run through
// [turn.Producer.RunToolCall] with the same call ids, those of one step
// concurrently, their results read by the next step in call order. The
// turn ends through [turn.Producer.End] with the last step's reason.
//
// On a resumed Producer Run goes on from the turn's stream (section 19.4):
// an open step is ended interrupted, the last step's calls without a
// result are finished under their call ids (a stored result reused, never
// launched again), and the conversation is rebuilt from the stored frames.
//
// The steps run under p's Context (the turn's cancellation: the turn ends
// cancelled) and ctx (its end leaves the turn interrupted). The error is
// nil whenever the Outcome's Status is on the stream (a failed turn
// included), and otherwise what stopped it: the window's, another writer
// ([turn.ErrAnotherWriter]), End's. A call another worker still claims
// leaves the turn interrupted and returns that claim-conflict: Run again
// once the lease ended.
func (l *Loop) Run(ctx context.Context, p *turn.Producer, history []Message) (Outcome, error) {
	if l.Model == nil || p == nil {
		return Outcome{}, errors.New("agent: Run needs a Model and a Producer")
	}
	work := p.Context()
	if ctx.Done() != nil { // the steps end with ctx too
		var cancel context.CancelCauseFunc
		work, cancel = context.WithCancelCause(work)
		stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
		defer func() { stop(); cancel(nil) }()
	}
	r := &run{l: l, p: p, ctx: ctx, work: work, history: len(history),
		msgs: append(make([]Message, 0, len(history)+8), history...)}
	return r.loop()
}
