// Package openaisdk reads the streams of the official OpenAI Go SDK
// (github.com/openai/openai-go/v3) into a turn's producer, an [ingest.Sink]:
// [ReadChat] takes a Chat Completions stream, [ReadResponses] a Responses stream,
// exactly as the client returns them (docs/contract.md section 17).
//
//	stream := client.Chat.Completions.NewStreaming(ctx, params)
//	defer stream.Close()
//	err := openaisdk.ReadChat(ctx, stream, ingest.ProducerSink(producer), nil)
//
// Each event's raw JSON goes through the same [ingest.Mapper] as [ingest.Read]
// reads a raw body with, so a stream makes the same turn either way. An
// error the SDK returns instead of an event (an HTTP error status after its
// retries, or an error frame inside the stream) fails the turn by the same
// rules.
//
// It is a module of its own so that the core module does not depend on the
// SDK.
package openaisdk

import (
	"context"
	"errors"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	"github.com/Papercusp/chat-protocol-go/ingest"
)

// Options configures a read; nil means the defaults.
type Options[T any] struct {
	// Options are the reader's: provider name, request model, reasoning
	// hook, observer.
	ingest.Options
	// OnEvent, when set, receives every event as the SDK decoded it,
	// before it is mapped: what a host accumulates to send the next
	// request (an [openai.ChatCompletionAccumulator], the Responses output
	// items). It must not keep the event's memory beyond the call.
	OnEvent func(event T)
}

// ReadChat reads a Chat Completions stream to the turn's end and drives
// sink, as [ingest.Read] does for a raw body (see there for the errors). It
// stops at the turn's end and leaves closing the stream to the caller.
func ReadChat(ctx context.Context, stream *ssestream.Stream[openai.ChatCompletionChunk], sink ingest.Sink, opts *Options[openai.ChatCompletionChunk]) error {
	return read(ctx, ingest.OpenAIChat, stream, sink, opts)
}

// ReadResponses reads a Responses stream to the turn's end and drives sink,
// as [ReadChat] does.
func ReadResponses(ctx context.Context, stream *ssestream.Stream[responses.ResponseStreamEventUnion], sink ingest.Sink, opts *Options[responses.ResponseStreamEventUnion]) error {
	return read(ctx, ingest.OpenAIResponses, stream, sink, opts)
}

// raw is an SDK event: it keeps the JSON it was decoded from.
type raw interface{ RawJSON() string }

func read[T raw](ctx context.Context, kind ingest.Kind, stream *ssestream.Stream[T], sink ingest.Sink, opts *Options[T]) error {
	var o Options[T]
	if opts != nil {
		o = *opts
	}
	m, err := ingest.NewMapper(kind, sink, &o.Options)
	if err != nil {
		return err
	}
	if err := ingest.MapEvents(ctx, m, stream, o.OnEvent); err != nil || m.Done() {
		return err
	}
	return end(ctx, m, stream.Err())
}

// end ends the turn with what the SDK's stream ended on.
func end(ctx context.Context, m *ingest.Mapper, err error) error {
	var streamErr *ssestream.StreamError
	var apiErr *openai.Error
	switch {
	case errors.As(err, &streamErr): // an error frame of the stream, given whole
		if err := m.Event(ctx, streamErr.Event.Data); err != nil || m.Done() {
			return err
		}
		return m.End(ctx, nil)
	case errors.As(err, &apiErr):
		return m.ProviderError(ctx, apiErr.StatusCode, []byte(apiErr.RawJSON()))
	}
	return m.EndWith(ctx, err)
}
