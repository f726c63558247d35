package ingest

import (
	"context"
	"encoding/json"
	"strings"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// Step is the [Sink] of one model step of a turn that [StepSink] returns
// (docs/contract.md sections 16.7 and 17): it writes provenance, text and
// tool calls into the turn's producer as [ProducerSink] does, but ends
// only the step, never the turn. Complete ends the step finished with the
// stop reason and the usage; Fail ends it failed with the code as its
// reason and the usage, and keeps the failure. What the step made is read
// after the reader returned: the text, the announced calls, the reason,
// the usage (Consumed), the failure. A Step is not safe for concurrent
// use.
type Step struct {
	producerSink
	text    strings.Builder
	calls   []turn.ToolCall
	usage   *chatprotocol.Usage
	reason  string
	failure *turn.Failure
	emitted bool
}

// StepSink returns the Sink that drives ONE step of p's turn: the model
// loop starts the step ([turn.Producer.StartStep]) before it reads the
// provider's response into it, and reads the [Step]'s accessors after.
// For a turn that is one provider response, [ProducerSink] ends the turn
// instead.
func StepSink(p *turn.Producer) *Step { return &Step{producerSink: producerSink{p}} }

// Delta appends text to the turn ([turn.Producer.Delta]) and to the
// step's text.
func (s *Step) Delta(ctx context.Context, text string) error {
	s.emitted = true
	if err := s.producerSink.Delta(ctx, text); err != nil {
		return err
	}
	s.text.WriteString(text)
	return nil
}

// Reasoning appends reasoning events ([turn.Producer.Reasoning]); they
// reached the turn (Emitted), but not the step's text.
func (s *Step) Reasoning(ctx context.Context, text string) error {
	s.emitted = true
	return s.producerSink.Reasoning(ctx, text)
}

// Source appends a source event ([turn.Producer.Source]); it reached the
// turn (Emitted).
func (s *Step) Source(ctx context.Context, src chatprotocol.WebSource) error {
	s.emitted = true
	return s.producerSink.Source(ctx, src)
}

// AnnounceToolCall appends the call's tool_call
// ([turn.Producer.AnnounceToolCall]) and adds it to the step's calls.
func (s *Step) AnnounceToolCall(ctx context.Context, callID, name string, input json.RawMessage) error {
	s.emitted = true
	if err := s.producerSink.AnnounceToolCall(ctx, callID, name, input); err != nil {
		return err
	}
	s.calls = append(s.calls, turn.ToolCall{ID: callID, Name: name, Input: input})
	return nil
}

// Usage keeps the step's usage for its end; it appends nothing.
func (s *Step) Usage(_ context.Context, u chatprotocol.Usage) error {
	s.usage = &u
	return nil
}

// Complete ends the step finished, with reason (the provider's stop
// reason) and the usage kept ([turn.Producer.FinishStep]).
func (s *Step) Complete(ctx context.Context, reason string) error {
	s.reason = reason
	return s.p.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepFinished, Reason: reason, Usage: s.usage})
}

// Fail keeps the failure and ends the step failed, with code as its
// reason and the usage kept ([turn.Producer.FinishStep]). The turn goes
// on: ending it (with the failure, or after a retried step) is the model
// loop's.
func (s *Step) Fail(ctx context.Context, code chatprotocol.ErrorCode, message string, retryable bool) error {
	s.reason = string(code)
	s.failure = &turn.Failure{Code: code, Message: message, Retryable: retryable}
	return s.p.FinishStep(ctx, turn.StepEnd{Status: chatprotocol.StepFailed, Reason: s.reason, Usage: s.usage})
}

// Text returns the step's text: its deltas that reached the turn, joined.
func (s *Step) Text() string { return s.text.String() }

// Calls returns the tool calls the step announced, in order; the slice is
// the Step's own.
func (s *Step) Calls() []turn.ToolCall { return s.calls }

// Reason returns the reason of the step's end, as given: the provider's
// stop reason for a finished step, the failure's code for a failed one,
// "" before the end.
func (s *Step) Reason() string { return s.reason }

// Consumed returns what the step consumed, as the provider counted it
// (the usage its end carries); nil when the provider sent no count. Usage
// is the Sink's method that receives it.
func (s *Step) Consumed() *chatprotocol.Usage { return s.usage }

// Failure returns the step's failure, nil when it finished (or has not
// ended). Its Retryable follows [Retryable] for this step alone.
func (s *Step) Failure() *turn.Failure { return s.failure }

// Emitted reports whether the step sent a delta, a tool call, reasoning or
// a source to the turn (one whose append failed included: it may have landed), so that
// retrying the step would repeat it.
func (s *Step) Emitted() bool { return s.emitted }
