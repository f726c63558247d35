package ingest

import (
	"context"
	"encoding/json"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// ProducerSink returns the [Sink] that writes a provider stream into p,
// the turn's producer (docs/contract.md sections 16 and 17): text through
// [turn.Producer.Delta], each tool call announced with
// [turn.Producer.AnnounceToolCall] (the host runs it with
// [turn.Producer.RunToolCall] and the same id), usage and the stop reason on the terminal lifecycle,
// and the end through [turn.Producer.Complete] or [turn.Producer.Fail]:
// it drives a whole turn that is one provider response, and writes no step
// event. A model loop of several steps reads each response with
// [StepSink] instead. It is a [ReasoningSink] and a [SourceSink]: with
// [Options.StreamReasoning] and [Options.StreamSources] it appends
// reasoning and source events ([turn.Producer.Reasoning],
// [turn.Producer.Source]).
func ProducerSink(p *turn.Producer) Sink { return producerSink{p} }

// producerSink writes a provider stream into a turn; [Step] shares its
// provenance, text and tool calls.
type producerSink struct{ p *turn.Producer }

// Provenance appends the provenance event of the model call
// ([turn.Producer.Provenance]).
func (s producerSink) Provenance(ctx context.Context, provider, model, responseID string) error {
	return s.p.Provenance(ctx, provider, model, responseID)
}

// Delta appends text to the turn ([turn.Producer.Delta]).
func (s producerSink) Delta(ctx context.Context, text string) error { return s.p.Delta(ctx, text) }

// Reasoning appends reasoning events ([turn.Producer.Reasoning]).
func (s producerSink) Reasoning(ctx context.Context, text string) error {
	return s.p.Reasoning(ctx, text)
}

// Source appends a source event ([turn.Producer.Source]).
func (s producerSink) Source(ctx context.Context, src chatprotocol.WebSource) error {
	return s.p.Source(ctx, src)
}

// AnnounceToolCall appends the call's tool_call
// ([turn.Producer.AnnounceToolCall]).
func (s producerSink) AnnounceToolCall(ctx context.Context, callID, name string, input json.RawMessage) error {
	return s.p.AnnounceToolCall(ctx, turn.ToolCall{ID: callID, Name: name, Input: input})
}

// Usage sets the turn's usage ([turn.Producer.SetUsage]).
func (s producerSink) Usage(_ context.Context, u chatprotocol.Usage) error {
	s.p.SetUsage(u)
	return nil
}

// Complete ends the turn completed, with reason on its lifecycle.
func (s producerSink) Complete(ctx context.Context, reason string) error {
	s.p.SetReason(reason)
	return s.p.Complete(ctx)
}

// Fail ends the turn failed, with the error event of code and message.
func (s producerSink) Fail(ctx context.Context, code chatprotocol.ErrorCode, message string, retryable bool) error {
	return s.p.Fail(ctx, turn.Failure{Code: code, Message: message, Retryable: retryable})
}
