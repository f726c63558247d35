package ingest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/turnsink"
)

// item is one event of a turn as the reasoning tests compare it: its type
// and its text (a delta's, a reasoning's, a source's URL and title, a
// lifecycle's status).
type item struct{ Type, Text string }

// readOpted reads the recorded body of kind/name into a turn with opts,
// through the producer, and returns its events after lifecycle started
// and provenance.
func readOpted(t *testing.T, kind ingest.Kind, name string, opts *ingest.Options) []item {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, err := os.ReadFile(filepath.Join(providers, string(kind), name+".sse"))
	require.NoError(t, err)
	var got []item
	sink := turnsink.New("c-1", "t-1", func(env *chatprotocol.ChatEventEnvelope) error {
		switch ev := env.Event.(type) {
		case *chatprotocol.DeltaEvent:
			got = append(got, item{"delta", ev.Text})
		case *chatprotocol.ToolCallEvent:
			got = append(got, item{"tool_call", ev.Name})
		case *chatprotocol.LifecycleEvent:
			if ev.Status != chatprotocol.LifecycleStarted {
				got = append(got, item{"lifecycle", string(ev.Status)})
			}
		case *chatprotocol.ErrorEvent:
			got = append(got, item{"error", string(ev.Code)})
		case *chatprotocol.AppEvent:
			if r, ok := chatprotocol.ReasoningOf(ev); ok {
				got = append(got, item{"reasoning", r.Text})
			} else if s, ok := chatprotocol.WebSourceOf(ev); ok {
				got = append(got, item{"source", s.URL + " " + s.Title})
			} else {
				t.Errorf("an app event of another shape: %s", ev.Raw)
			}
		}
		return nil
	})
	_ = ingest.Read(ctx, kind, bytes.NewReader(body), sink, opts)
	return got
}

var opted = &ingest.Options{StreamReasoning: true, StreamSources: true}

// TestStreamReasoning: with StreamReasoning, each provider's reasoning
// reaches the stream as reasoning events, in stream order, never in the
// text (docs/contract.md section 17.1).
func TestStreamReasoning(t *testing.T) {
	assert.Equal(t, []item{
		{"reasoning", "I need to find the GCD of 1071 and 462."},
		{"reasoning", "\n1071 = 2*462 + 147"},
		{"delta", "The GCD is"}, {"delta", " 21."},
		{"lifecycle", "completed"},
	}, readOpted(t, ingest.AnthropicMessages, "thinking-text", opted))
	assert.Equal(t, []item{
		{"reasoning", "**Considering the question**\n\n"},
		{"reasoning", "The user wants a prime."},
		{"reasoning", " 7 works."},
		{"delta", "A prime number:"}, {"delta", " 7."},
		{"lifecycle", "completed"},
	}, readOpted(t, ingest.OpenAIResponses, "reasoning-summary", opted))
	chat := readOpted(t, ingest.OpenAIChat, "reasoning-content", opted)
	require.NotEmpty(t, chat)
	assert.Equal(t, "reasoning", chat[0].Type)
	for _, it := range chat {
		if it.Type == "delta" {
			assert.NotContains(t, it.Text, chat[0].Text)
		}
	}
	assert.Equal(t, item{"lifecycle", "completed"}, chat[len(chat)-1])

	// Without the option, the same bodies make no reasoning event.
	for _, c := range []struct {
		kind ingest.Kind
		name string
	}{{ingest.AnthropicMessages, "thinking-text"}, {ingest.OpenAIResponses, "reasoning-summary"}, {ingest.OpenAIChat, "reasoning-content"}} {
		for _, it := range readOpted(t, c.kind, c.name, nil) {
			assert.NotEqual(t, "reasoning", it.Type, c.name)
		}
	}
}

// TestStreamSources: with StreamSources, Anthropic web search results and
// citations and Responses url_citation annotations are sources, one per
// URL of the response.
func TestStreamSources(t *testing.T) {
	assert.Equal(t, []item{
		{"source", "https://example.com/w Weather"},
		{"delta", "It is sunny in New York today."},
		{"lifecycle", "completed"},
	}, readOpted(t, ingest.AnthropicMessages, "server-tool-use", opted))
	assert.Equal(t, []item{
		{"delta", "It is sunny in New York today "},
		{"delta", "([example.com](https://example.com/w?utm_source=openai))."},
		{"source", "https://example.com/w?utm_source=openai Weather"},
		{"lifecycle", "completed"},
	}, readOpted(t, ingest.OpenAIResponses, "url-citation", opted))
	for _, it := range readOpted(t, ingest.OpenAIResponses, "url-citation", &ingest.Options{StreamReasoning: true}) {
		assert.NotEqual(t, "source", it.Type)
	}
}

// TestStreamSourcesOnlyWebURLs: a citation whose URL is not an absolute
// http or https URL is no source.
func TestStreamSourcesOnlyWebURLs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body := `event: message_start
data: {"type":"message_start","message":{"model":"m","id":"msg_1","usage":{"input_tokens":1,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"web_search_tool_result","tool_use_id":"s","content":[{"type":"web_search_result","url":"javascript:alert(1)","title":"x"},{"type":"web_search_result","url":"/relative","title":"y"},{"type":"web_search_result","url":"http://example.org/a","title":""},{"type":"other","url":"https://example.org/b"}]}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"c","document_index":0}}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"citations_delta","citation":{"type":"web_search_result_location","url":"http://example.org/a","title":"again"}}}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":2}}

event: message_stop
data: {"type":"message_stop"}

`
	var sources []chatprotocol.WebSource
	sink := &sourceRecorder{}
	require.NoError(t, ingest.Read(ctx, ingest.AnthropicMessages, bytes.NewReader([]byte(body)), sink, opted))
	sources = sink.sources
	assert.Equal(t, []chatprotocol.WebSource{{URL: "http://example.org/a"}}, sources)
}

// sourceRecorder is a recorder that is a SourceSink.
type sourceRecorder struct {
	recorder
	sources []chatprotocol.WebSource
}

func (s *sourceRecorder) Source(_ context.Context, src chatprotocol.WebSource) error {
	s.sources = append(s.sources, src)
	return nil
}

// TestStreamReasoningPlainSink: a Sink that is no ReasoningSink gets
// nothing of the reasoning, the options set, and the hook still does.
func TestStreamReasoningPlainSink(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	body, err := os.ReadFile(filepath.Join(providers, "anthropic-messages", "thinking-text.sse"))
	require.NoError(t, err)
	var hooked []string
	rec := &recorder{}
	opts := &ingest.Options{StreamReasoning: true, StreamSources: true, Reasoning: func(_ context.Context, text string) error {
		hooked = append(hooked, text)
		return nil
	}}
	require.NoError(t, ingest.Read(ctx, ingest.AnthropicMessages, bytes.NewReader(body), rec, opts))
	assert.Equal(t, []string{"I need to find the GCD of 1071 and 462.", "\n1071 = 2*462 + 147"}, hooked)
	var methods []string
	for _, c := range rec.calls {
		methods = append(methods, c.Method)
	}
	assert.Equal(t, []string{"provenance", "delta", "delta", "usage", "complete"}, methods)
}

// TestStreamedReasoningIsEmitted: reasoning on the stream counts as
// emitted (docs/contract.md section 17.5): a transient error after it is
// not retryable.
func TestStreamedReasoningIsEmitted(t *testing.T) {
	body := `event: message_start
data: {"type":"message_start","message":{"model":"m","id":"msg_1","usage":{"input_tokens":1,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}

event: error
data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}

`
	for _, c := range []struct {
		opts      *ingest.Options
		retryable bool
	}{{nil, true}, {opted, false}} {
		rec := &reasoningRecorder{}
		require.NoError(t, ingest.Read(context.Background(), ingest.AnthropicMessages, bytes.NewReader([]byte(body)), rec, c.opts))
		last := rec.calls[len(rec.calls)-1]
		assert.Equal(t, "fail", last.Method)
		assert.Equal(t, ingest.CodeOverloaded, last.Code)
		assert.Equal(t, c.retryable, last.Retryable)
	}
}

// reasoningRecorder is a recorder that is a ReasoningSink.
type reasoningRecorder struct{ recorder }

func (r *reasoningRecorder) Reasoning(_ context.Context, text string) error {
	return r.add(call{Method: "reasoning", Text: text})
}
