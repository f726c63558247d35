package modelstep

import (
	"context"
	"encoding/json"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
)

// Sink is an [ingest.Sink] that keeps the first error its own Sink returned,
// so that a model's Step tells it from the errors a reader returns after
// failing the turn (a cut stream, a frame too large).
type Sink struct {
	ingest.Sink
	err error
}

// Guard returns a Sink driving s.
func Guard(s ingest.Sink) *Sink { return &Sink{Sink: s} }

// keep notes err if it is the first.
func (s *Sink) keep(err error) error {
	if err != nil && s.err == nil {
		s.err = err
	}
	return err
}

// Provenance calls the Sink's.
func (s *Sink) Provenance(ctx context.Context, provider, model, responseID string) error {
	return s.keep(s.Sink.Provenance(ctx, provider, model, responseID))
}

// Delta calls the Sink's.
func (s *Sink) Delta(ctx context.Context, text string) error {
	return s.keep(s.Sink.Delta(ctx, text))
}

// AnnounceToolCall calls the Sink's.
func (s *Sink) AnnounceToolCall(ctx context.Context, callID, name string, input json.RawMessage) error {
	return s.keep(s.Sink.AnnounceToolCall(ctx, callID, name, input))
}

// Reasoning calls the Sink's when it is an [ingest.ReasoningSink], else
// drops text.
func (s *Sink) Reasoning(ctx context.Context, text string) error {
	if rs, ok := s.Sink.(ingest.ReasoningSink); ok {
		return s.keep(rs.Reasoning(ctx, text))
	}
	return nil
}

// Source calls the Sink's when it is an [ingest.SourceSink], else drops
// src.
func (s *Sink) Source(ctx context.Context, src chatprotocol.WebSource) error {
	if ss, ok := s.Sink.(ingest.SourceSink); ok {
		return s.keep(ss.Source(ctx, src))
	}
	return nil
}

// Usage calls the Sink's.
func (s *Sink) Usage(ctx context.Context, u chatprotocol.Usage) error {
	return s.keep(s.Sink.Usage(ctx, u))
}

// Complete calls the Sink's.
func (s *Sink) Complete(ctx context.Context, reason string) error {
	return s.keep(s.Sink.Complete(ctx, reason))
}

// Fail calls the Sink's.
func (s *Sink) Fail(ctx context.Context, code chatprotocol.ErrorCode, message string, retryable bool) error {
	return s.keep(s.Sink.Fail(ctx, code, message, retryable))
}

// Result returns the error a model's Step returns once its reader returned
// err, by the rule of [agent.Model]: the Sink's own error, ctx's when ctx
// ended, else nil, since the reader failed the turn through the Sink.
func (s *Sink) Result(ctx context.Context, err error) error {
	switch {
	case s.err != nil:
		return s.err
	case err != nil && ctx.Err() != nil:
		return ctx.Err()
	}
	return nil
}
