package otelchat_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/observe"
)

// nopSink is an ingest.Sink that takes everything.
type nopSink struct{}

func (nopSink) Provenance(context.Context, string, string, string) error                { return nil }
func (nopSink) Delta(context.Context, string) error                                     { return nil }
func (nopSink) AnnounceToolCall(context.Context, string, string, json.RawMessage) error { return nil }
func (nopSink) Usage(context.Context, chatprotocol.Usage) error                         { return nil }
func (nopSink) Complete(context.Context, string) error                                  { return nil }
func (nopSink) Fail(context.Context, chatprotocol.ErrorCode, string, bool) error        { return nil }

// TestGenAIAttributesOnTheTurnSpan: a provider stream read under the turn's
// span puts the GenAI attributes of its provenance and usage on that span.
func TestGenAIAttributesOnTheTurnSpan(t *testing.T) {
	tel := newTelemetry(t)
	body, err := os.Open("../testdata/providers/anthropic-messages/usage-cache.sse")
	require.NoError(t, err)
	defer body.Close()
	ctx, turn := tel.tp.Tracer("host").Start(context.Background(), "turn")
	require.NoError(t, ingest.Read(ctx, ingest.AnthropicMessages, body, nopSink{}, &ingest.Options{
		Observer: tel.obs, Conversation: "c-1", Turn: "t-1", RequestModel: "claude-sonnet-4-5",
	}))
	turn.End()
	spans := tel.ended("turn")
	require.Len(t, spans, 1)
	a := attrs(spans[0])
	assert.Equal(t, "chat", a["gen_ai.operation.name"].AsString())
	assert.Equal(t, "anthropic", a["gen_ai.provider.name"].AsString())
	assert.Equal(t, "claude-sonnet-4-5", a["gen_ai.request.model"].AsString())
	assert.Equal(t, "claude-sonnet-4-5-20250929", a["gen_ai.response.model"].AsString())
	assert.Equal(t, "msg_01XFDUDYJgAACzvnptvVoYEL", a["gen_ai.response.id"].AsString())
	assert.Equal(t, int64(12+1024+2048), a["gen_ai.usage.input_tokens"].AsInt64(), "cached input tokens included")
	assert.Equal(t, int64(28), a["gen_ai.usage.output_tokens"].AsInt64())
	assert.Empty(t, tel.ended("chat.model.response"), "no span of its own under the turn's span")
}

// TestGenAIWithoutUsage: a cut stream sends no usage, so no token
// attribute is set (never a zero).
func TestGenAIWithoutUsage(t *testing.T) {
	tel := newTelemetry(t)
	body, err := os.Open("../testdata/providers/openai-chat/cut.sse")
	require.NoError(t, err)
	defer body.Close()
	ctx, turn := tel.tp.Tracer("host").Start(context.Background(), "turn")
	require.NoError(t, ingest.Read(ctx, ingest.OpenAIChat, body, nopSink{}, &ingest.Options{Observer: tel.obs}))
	turn.End()
	a := attrs(tel.ended("turn")[0])
	assert.Equal(t, "openai", a["gen_ai.provider.name"].AsString())
	assert.Equal(t, "gpt-4o-2024-08-06", a["gen_ai.response.model"].AsString())
	assert.NotContains(t, a, attribute.Key("gen_ai.usage.input_tokens"))
	assert.NotContains(t, a, attribute.Key("gen_ai.usage.output_tokens"))
	assert.NotContains(t, a, attribute.Key("gen_ai.request.model"))
}

// TestGenAIUnderARemoteParent: with no recorded span in the context, only
// a remote parent, the model response is a span of its own.
func TestGenAIUnderARemoteParent(t *testing.T) {
	tel := newTelemetry(t)
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	tel.obs.Observe(ctx, observe.Event{Kind: observe.ModelResponse, Turn: "t-1", Status: "completed", Provider: "openai", ResponseModel: "gpt-4.1", InputTokens: 10, OutputTokens: -1})
	spans := tel.ended("chat.model.response")
	require.Len(t, spans, 1)
	a := attrs(spans[0])
	assert.Equal(t, "openai", a["gen_ai.provider.name"].AsString())
	assert.Equal(t, int64(10), a["gen_ai.usage.input_tokens"].AsInt64())
	assert.NotContains(t, a, attribute.Key("gen_ai.usage.output_tokens"))
	assert.Equal(t, "t-1", a["chat.turn.id"].AsString())
	assert.Equal(t, parent.TraceID(), spans[0].Parent().TraceID())

	tel.obs.Observe(context.Background(), observe.Event{Kind: observe.ModelResponse, Provider: "openai"})
	assert.Len(t, tel.ended("chat.model.response"), 1, "outside any trace: no span")
}
