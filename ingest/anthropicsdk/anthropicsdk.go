// Package anthropicsdk reads the Messages stream of the official Anthropic
// Go SDK (github.com/anthropics/anthropic-sdk-go/v2) into a turn's producer,
// an [ingest.Sink], exactly as the client returns it (docs/contract.md section
// 17):
//
//	stream := client.Messages.NewStreaming(ctx, params)
//	defer stream.Close()
//	err := anthropicsdk.Read(ctx, stream, ingest.ProducerSink(producer), nil)
//
// Each event's raw JSON goes through the same [ingest.Mapper] as [ingest.Read]
// reads a raw body with, so a stream makes the same turn either way. The
// error events the SDK returns as errors (overloaded_error after HTTP 200
// included, which no SDK retries) and the HTTP errors left after its
// retries fail the turn by the same rules.
//
// It is a module of its own so that the core module does not depend on the
// SDK.
package anthropicsdk

import (
	"context"
	"errors"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/Papercusp/chat-protocol-go/ingest"
)

// Options configures Read; nil means the defaults.
type Options struct {
	// Options are the reader's: provider name, request model, reasoning
	// hook, observer.
	ingest.Options
	// OnEvent, when set, receives every event as the SDK decoded it,
	// before it is mapped: a host that sends thinking blocks back (tool use
	// with extended thinking) accumulates them with [anthropic.Message]'s
	// Accumulate. It must not keep the event's memory beyond the call.
	OnEvent func(event anthropic.MessageStreamEventUnion)
}

// Read reads a Messages stream to the turn's end and drives sink, as
// [ingest.Read] does for a raw body (see there for the errors). It stops at
// the turn's end and leaves closing the stream to the caller.
func Read(ctx context.Context, stream *ssestream.Stream[anthropic.MessageStreamEventUnion], sink ingest.Sink, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	m, err := ingest.NewMapper(ingest.AnthropicMessages, sink, &o.Options)
	if err != nil {
		return err
	}
	if err := ingest.MapEvents(ctx, m, stream, o.OnEvent); err != nil || m.Done() {
		return err
	}
	err = stream.Err()
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) { // an error event, or an HTTP error status
		return m.ProviderError(ctx, apiErr.StatusCode, []byte(apiErr.RawJSON()))
	}
	return m.EndWith(ctx, err)
}
