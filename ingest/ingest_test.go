package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/internal/turnsink"
	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// providers is the directory of the recorded provider bodies.
const providers = "../testdata/providers"

// call is one call a recorder received.
type call struct {
	Method    string
	Text      string // Delta's text, Complete's reason, Fail's message
	CallID    string
	Name      string
	Input     string
	Code      chatprotocol.ErrorCode
	Retryable bool
	Total     int64
	Provider  string
	Model     string
	ID        string
}

// recorder is a Sink that records every call.
type recorder struct {
	calls  []call
	failOn string // a method whose call returns errSink
}

var errSink = errors.New("sink refused")

func (r *recorder) add(c call) error {
	r.calls = append(r.calls, c)
	if c.Method == r.failOn {
		return errSink
	}
	return nil
}

func (r *recorder) Provenance(_ context.Context, provider, model, id string) error {
	return r.add(call{Method: "provenance", Provider: provider, Model: model, ID: id})
}
func (r *recorder) Delta(_ context.Context, text string) error {
	return r.add(call{Method: "delta", Text: text})
}
func (r *recorder) AnnounceToolCall(_ context.Context, id, name string, input json.RawMessage) error {
	return r.add(call{Method: "tool_call", CallID: id, Name: name, Input: string(input)})
}
func (r *recorder) Usage(_ context.Context, u chatprotocol.Usage) error {
	return r.add(call{Method: "usage", Total: *u.TotalTokens})
}
func (r *recorder) Complete(_ context.Context, reason string) error {
	return r.add(call{Method: "complete", Text: reason})
}
func (r *recorder) Fail(_ context.Context, code chatprotocol.ErrorCode, message string, retryable bool) error {
	return r.add(call{Method: "fail", Code: code, Text: message, Retryable: retryable})
}

func (r *recorder) of(method string) []call {
	var out []call
	for _, c := range r.calls {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

func (r *recorder) text() string {
	var b strings.Builder
	for _, c := range r.of("delta") {
		b.WriteString(c.Text)
	}
	return b.String()
}

func (r *recorder) last() call { return r.calls[len(r.calls)-1] }

// read reads the fixture kind/name through Read into a recorder.
func read(t *testing.T, kind ingest.Kind, name string, opts *ingest.Options) (*recorder, error) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join(providers, string(kind), name+".sse"))
	require.NoError(t, err)
	r := &recorder{}
	err = ingest.Read(context.Background(), kind, bytes.NewReader(body), r, opts)
	return r, err
}

// fixtures lists every recorded body as kind and name.
func fixtures(t *testing.T) map[ingest.Kind][]string {
	t.Helper()
	out := map[ingest.Kind][]string{}
	for _, k := range ingest.Kinds() {
		paths, err := filepath.Glob(filepath.Join(providers, string(k), "*.sse"))
		require.NoError(t, err)
		for _, p := range paths {
			out[k] = append(out[k], strings.TrimSuffix(filepath.Base(p), ".sse"))
		}
		require.GreaterOrEqual(t, len(out[k]), 8, k)
	}
	return out
}

// envelopes reads body through Read and turnsink, as chatwire ingest does.
func envelopes(t *testing.T, kind ingest.Kind, body io.Reader) ([]byte, error) {
	t.Helper()
	var out []byte
	state := chatprotocol.NewChatStateV1("c-1")
	sink := turnsink.New("c-1", "t-1", func(env *chatprotocol.ChatEventEnvelope) error {
		if err := state.Apply(*env); err != nil {
			return err
		}
		var err error
		out, err = env.AppendJSON(out)
		out = append(out, '\n')
		return err
	})
	err := ingest.Read(context.Background(), kind, body, sink, &ingest.Options{Conversation: "c-1", Turn: "t-1"})
	return out, err
}

// TestEveryFixtureInAnyChunking: each body gives its expected envelopes
// whether the reader hands it over whole, one byte at a time or in halves.
func TestEveryFixtureInAnyChunking(t *testing.T) {
	for kind, names := range fixtures(t) {
		for _, name := range names {
			base := filepath.Join(providers, string(kind), name)
			body, err := os.ReadFile(base + ".sse")
			require.NoError(t, err)
			want, err := os.ReadFile(base + ".jsonl")
			require.NoError(t, err)
			for label, r := range map[string]io.Reader{
				"whole":    bytes.NewReader(body),
				"one byte": iotest.OneByteReader(bytes.NewReader(body)),
				"halves":   iotest.HalfReader(bytes.NewReader(body)),
			} {
				got, err := envelopes(t, kind, r)
				if strings.Contains(name, "inside-frame") {
					assert.ErrorIs(t, err, ingest.ErrCut, "%s/%s %s", kind, name, label)
				} else {
					assert.NoError(t, err, "%s/%s %s", kind, name, label)
				}
				assert.Equal(t, string(want), string(got), "%s/%s %s", kind, name, label)
			}
		}
	}
}

// TestOneTerminalAndProvenanceFirst: every fixture gives provenance first
// and exactly one terminal call, last, with usage (if any) just before it;
// a cut body never completes.
func TestOneTerminalAndProvenanceFirst(t *testing.T) {
	for kind, names := range fixtures(t) {
		for _, name := range names {
			r, _ := read(t, kind, name, nil)
			require.NotEmpty(t, r.calls)
			assert.Equal(t, "provenance", r.calls[0].Method, "%s/%s", kind, name)
			assert.Len(t, r.of("provenance"), 1)
			terminals := len(r.of("complete")) + len(r.of("fail"))
			assert.Equal(t, 1, terminals, "%s/%s", kind, name)
			last := r.last().Method
			assert.Contains(t, []string{"complete", "fail"}, last, "%s/%s", kind, name)
			if u := r.of("usage"); len(u) > 0 {
				assert.Len(t, u, 1)
				assert.Equal(t, "usage", r.calls[len(r.calls)-2].Method, "%s/%s: usage just before the end", kind, name)
			}
			if strings.HasPrefix(name, "cut") {
				assert.Equal(t, "fail", last, "%s/%s: a cut stream never completes", kind, name)
				assert.Equal(t, ingest.CodeStreamCut, r.last().Code)
			}
			for _, c := range r.of("tool_call") {
				assert.NotEmpty(t, c.CallID)
				assert.NotEmpty(t, c.Name)
				assert.False(t, strings.HasPrefix(c.CallID, "fc_"), "%s/%s: a Responses item id is never the call id", kind, name)
			}
		}
	}
}

func TestChatToolCalls(t *testing.T) {
	r, err := read(t, ingest.OpenAIChat, "tool-calls-interleaved", nil)
	require.NoError(t, err)
	assert.Equal(t, []call{
		{Method: "tool_call", CallID: "call_Vq3kVbOVn8YRm0fmJ6cXpgTQ", Name: "get_weather", Input: `{"location":"Paris, FR","unit":"c"}`},
		{Method: "tool_call", CallID: "call_8ZgN2mUo3d1xKwYbT5rCfLhE", Name: "get_time", Input: `{"tz":"Europe/Paris"}`},
	}, r.of("tool_call"))
	assert.Equal(t, call{Method: "complete", Text: "tool_calls"}, r.last())
	assert.Equal(t, int64(133), r.of("usage")[0].Total)

	r, err = read(t, ingest.OpenAIChat, "tool-name-after-id", nil)
	require.NoError(t, err)
	assert.Equal(t, []call{{Method: "tool_call", CallID: "call_NmAfterId0000000000000001", Name: "search_docs", Input: `{"query":"refund policy"}`}}, r.of("tool_call"))

	r, err = read(t, ingest.OpenAIChat, "tool-name-repeated", nil)
	require.NoError(t, err)
	assert.Equal(t, []call{{Method: "tool_call", CallID: "call_RepeatedName000000000001", Name: "create_return", Input: `{"order_id":"A-1042","reason":"damaged"}`}}, r.of("tool_call"))

	r, err = read(t, ingest.OpenAIChat, "tool-arguments-fragmented", nil)
	require.NoError(t, err)
	assert.Equal(t, `{"city":"Zürich","days":14,"note":"line1\nline2 ☃","tags":["a","b"]}`, r.of("tool_call")[0].Input,
		"the fragments' JSON, split inside an escape, parsed and written compact")
}

func TestChatNewIDAtSameIndexIsAnotherCall(t *testing.T) {
	body := `data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"a","arguments":"{}"}}]}}]}

data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_2","function":{"name":"b","arguments":"{\"k\":1}"}}]}}]}

data: {"id":"x","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`
	r := &recorder{}
	require.NoError(t, ingest.Read(context.Background(), ingest.OpenAIChat, strings.NewReader(body), r, nil))
	assert.Equal(t, []call{
		{Method: "tool_call", CallID: "call_1", Name: "a", Input: `{}`},
		{Method: "tool_call", CallID: "call_2", Name: "b", Input: `{"k":1}`},
	}, r.of("tool_call"))
	assert.Empty(t, r.of("usage"), "no usage sent: none reported, never zero")
}

func TestResponsesCallIDsFromItems(t *testing.T) {
	r, err := read(t, ingest.OpenAIResponses, "function-calls-interleaved", nil)
	require.NoError(t, err)
	assert.Equal(t, []call{
		{Method: "tool_call", CallID: "call_A1", Name: "add", Input: `{"a":2,"b":3}`},
		{Method: "tool_call", CallID: "call_B2", Name: "multiply", Input: `{"x":4,"y":5}`},
	}, r.of("tool_call"))
	assert.Equal(t, int64(160), r.of("usage")[0].Total)

	r, err = read(t, ingest.OpenAIResponses, "function-call-name-late", nil)
	require.NoError(t, err)
	assert.Equal(t, []call{{Method: "tool_call", CallID: "call_NameLate01", Name: "lookup", Input: `{"sku":"B-9"}`}}, r.of("tool_call"))
}

func TestReasoningNeverInText(t *testing.T) {
	for _, c := range []struct {
		kind            ingest.Kind
		name, text, why string
	}{
		{ingest.OpenAIResponses, "reasoning-summary", "A prime number: 7.", "**Considering the question**\n\nThe user wants a prime. 7 works."},
		{ingest.AnthropicMessages, "thinking-text", "The GCD is 21.", "I need to find the GCD of 1071 and 462.\n1071 = 2*462 + 147"},
		{ingest.OpenAIChat, "reasoning-content", "2 + 2 = 4.", "The user asks 2+2. That is 4."},
	} {
		var reasoning strings.Builder
		r, err := read(t, c.kind, c.name, &ingest.Options{Reasoning: func(_ context.Context, text string) error {
			reasoning.WriteString(text)
			return nil
		}})
		require.NoError(t, err)
		assert.Equal(t, c.text, r.text(), c.name)
		assert.Equal(t, c.why, reasoning.String(), c.name)
		assert.Equal(t, "complete", r.last().Method)
	}
}

func TestAnthropicUsageReplacesNeverAdds(t *testing.T) {
	r, err := read(t, ingest.AnthropicMessages, "usage-cache", nil)
	require.NoError(t, err)
	// input 12 + cache creation 1024 + cache read 2048 + final output 28;
	// adding message_delta to message_start would give 3113 or more.
	assert.Equal(t, int64(12+1024+2048+28), r.of("usage")[0].Total)

	r, err = read(t, ingest.AnthropicMessages, "text", nil)
	require.NoError(t, err)
	assert.Equal(t, int64(472+15), r.of("usage")[0].Total)

	r, err = read(t, ingest.AnthropicMessages, "cut", nil)
	require.NoError(t, err)
	assert.Empty(t, r.of("usage"), "no final count: no usage")
}

func TestRetryRule(t *testing.T) {
	for _, c := range []struct {
		kind      ingest.Kind
		name      string
		code      chatprotocol.ErrorCode
		retryable bool
	}{
		{ingest.AnthropicMessages, "overloaded-before-delta", ingest.CodeOverloaded, true},
		{ingest.AnthropicMessages, "overloaded-after-delta", ingest.CodeOverloaded, false},
		{ingest.AnthropicMessages, "rate-limit-before-delta", ingest.CodeRateLimited, true},
		{ingest.AnthropicMessages, "error-not-transient", ingest.CodeError, false},
		{ingest.AnthropicMessages, "cut-inside-tool-input", ingest.CodeStreamCut, true},
		{ingest.AnthropicMessages, "refusal", ingest.CodeRefusal, false},
		{ingest.OpenAIChat, "error-before-delta", ingest.CodeServerError, true},
		{ingest.OpenAIChat, "error-after-delta", ingest.CodeRateLimited, false},
		{ingest.OpenAIChat, "error-not-transient", ingest.CodeError, false},
		{ingest.OpenAIChat, "cut-before-delta", ingest.CodeStreamCut, true},
		{ingest.OpenAIChat, "cut", ingest.CodeStreamCut, false},
		{ingest.OpenAIChat, "content-filter", ingest.CodeContentFilter, false},
		{ingest.OpenAIChat, "refusal", ingest.CodeRefusal, false},
		{ingest.OpenAIResponses, "error-before-delta", ingest.CodeServerError, true},
		{ingest.OpenAIResponses, "failed-before-delta", ingest.CodeServerError, true},
		{ingest.OpenAIResponses, "failed-after-delta", ingest.CodeRateLimited, false},
		{ingest.OpenAIResponses, "failed-not-transient", ingest.CodeError, false},
		{ingest.OpenAIResponses, "incomplete-content-filter", ingest.CodeContentFilter, false},
		{ingest.OpenAIResponses, "refusal", ingest.CodeRefusal, false},
	} {
		r, _ := read(t, c.kind, c.name, nil)
		last := r.last()
		assert.Equal(t, "fail", last.Method, c.name)
		assert.Equal(t, c.code, last.Code, "%s/%s", c.kind, c.name)
		assert.Equal(t, c.retryable, last.Retryable, "%s/%s", c.kind, c.name)
	}
	r, _ := read(t, ingest.OpenAIChat, "refusal", nil)
	assert.Equal(t, "I'm sorry, I can't help with that.", r.last().Text, "the refusal's text is the message, never the turn's text")
	assert.Empty(t, r.of("delta"))
}

func TestRetryable(t *testing.T) {
	for _, code := range []chatprotocol.ErrorCode{ingest.CodeOverloaded, ingest.CodeRateLimited, ingest.CodeTimeout, ingest.CodeServerError, ingest.CodeStreamCut} {
		assert.True(t, ingest.Retryable(code, false), code)
		assert.False(t, ingest.Retryable(code, true), code)
	}
	for _, code := range []chatprotocol.ErrorCode{ingest.CodeError, ingest.CodeContentFilter, ingest.CodeRefusal, ingest.CodeInvalidToolCall, ingest.CodeInvalidStream} {
		assert.False(t, ingest.Retryable(code, false), code)
	}
}

func TestNormalEnds(t *testing.T) {
	for _, c := range []struct {
		kind         ingest.Kind
		name, reason string
	}{
		{ingest.OpenAIChat, "text", "stop"},
		{ingest.OpenAIChat, "finish-length", "length"},
		{ingest.OpenAIResponses, "text", ""},
		{ingest.OpenAIResponses, "incomplete-max-tokens", "max_output_tokens"},
		{ingest.AnthropicMessages, "text", "end_turn"},
		{ingest.AnthropicMessages, "max-tokens", "max_tokens"},
		{ingest.AnthropicMessages, "tool-use", "tool_use"},
	} {
		r, err := read(t, c.kind, c.name, nil)
		require.NoError(t, err)
		assert.Equal(t, call{Method: "complete", Text: c.reason}, r.last(), "%s/%s", c.kind, c.name)
	}
	r, _ := read(t, ingest.OpenAIChat, "text", nil)
	assert.Equal(t, "Hello! The capital of France is Paris. Café crème, ☕ and 🥐 — \"quoted\"\n", r.text())
	r, _ = read(t, ingest.OpenAIChat, "text-unnormalized", nil)
	assert.Equal(t, "Cafe\u0301 vs Caf\u00e9 \ufb01", r.text(), "no Unicode normalization")
	assert.Equal(t, call{Method: "provenance", Provider: "openai", Model: "gpt-4o-2024-08-06", ID: "chatcmpl-BqJ9xT3m1ZkL0aP8vR2sN7yQ4wE6u"}, r.calls[0])
	r, _ = read(t, ingest.AnthropicMessages, "server-tool-use", nil)
	assert.Empty(t, r.of("tool_call"), "the provider's own tools are not the host's calls")
}

func TestProviderOption(t *testing.T) {
	r, err := read(t, ingest.OpenAIChat, "reasoning-content", &ingest.Options{Provider: "deepseek"})
	require.NoError(t, err)
	assert.Equal(t, call{Method: "provenance", Provider: "deepseek", Model: "deepseek-reasoner", ID: "0f1e2d3c-4b5a-6978-8695-a4b3c2d1e0f9"}, r.calls[0])
}

func TestSinkErrorStops(t *testing.T) {
	for _, method := range []string{"provenance", "delta", "usage", "complete"} {
		r := &recorder{failOn: method}
		body, err := os.ReadFile(filepath.Join(providers, "openai-chat", "text.sse"))
		require.NoError(t, err)
		err = ingest.Read(context.Background(), ingest.OpenAIChat, bytes.NewReader(body), r, nil)
		assert.ErrorIs(t, err, errSink, method)
		assert.Equal(t, method, r.last().Method, "nothing after the refused call")
	}
}

func TestContextCancelledEndsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &recorder{}
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte("data: {\"id\":\"x\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"))
		cancel()
		pw.Write([]byte("data: {\"id\":\"x\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"}}]}\n\n"))
		pw.Close()
	}()
	err := ingest.Read(ctx, ingest.OpenAIChat, pr, r, nil)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Empty(t, r.of("complete"))
	assert.Empty(t, r.of("fail"), "the host cancels the turn, the reader does not end it")
}

func TestReadErrorIsACut(t *testing.T) {
	body := "data: {\"id\":\"x\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"
	broken := io.MultiReader(strings.NewReader(body), iotest.ErrReader(io.ErrUnexpectedEOF))
	r := &recorder{}
	err := ingest.Read(context.Background(), ingest.OpenAIChat, broken, r, nil)
	assert.ErrorIs(t, err, ingest.ErrCut)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.Equal(t, call{Method: "fail", Code: ingest.CodeStreamCut, Text: r.last().Text, Retryable: false}, r.last())
}

func TestMalformedFrames(t *testing.T) {
	for _, c := range []struct {
		name string
		kind ingest.Kind
		body string
		code chatprotocol.ErrorCode
	}{
		{"not JSON", ingest.OpenAIChat, "data: {\"id\":\"x\",\n\n", ingest.CodeInvalidStream},
		{"not an object", ingest.AnthropicMessages, "event: ping\ndata: [1]\n\n", ingest.CodeInvalidStream},
		{"data after the object", ingest.OpenAIResponses, "data: {\"type\":\"response.created\"} {}\n\n", ingest.CodeInvalidStream},
		{"arguments not JSON", ingest.OpenAIChat, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n", ingest.CodeInvalidToolCall},
		{"duplicate names in arguments", ingest.AnthropicMessages, "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"n\",\"input\":{}}}\n\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":1,\\\"a\\\":2}\"}}\n\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n", ingest.CodeInvalidToolCall},
		{"tool call without an id", ingest.OpenAIChat, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n", ingest.CodeInvalidToolCall},
		{"function call without a call id", ingest.OpenAIResponses, "data: {\"type\":\"response.output_item.done\",\"item\":{\"type\":\"function_call\",\"id\":\"fc_1\",\"name\":\"f\",\"arguments\":\"{}\"}}\n\n", ingest.CodeInvalidToolCall},
	} {
		r := &recorder{}
		require.NoError(t, ingest.Read(context.Background(), c.kind, strings.NewReader(c.body), r, nil), c.name)
		assert.Equal(t, "fail", r.last().Method, c.name)
		assert.Equal(t, c.code, r.last().Code, c.name)
		assert.False(t, r.last().Retryable, c.name)
	}
}

func TestTolerantOfProviderJSON(t *testing.T) {
	// Unknown members, a duplicated name (the last counts), an unpaired
	// surrogate (U+FFFD) and escapes in names are read, never refused.
	body := "data: {\"id\":\"x\",\"model\":\"m\",\"future\":{\"a\":[1,2]},\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\",\"content\":\"b\\ud800c\",\"extra\":true}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"\\u0063ontent\":\"!\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	r := &recorder{}
	require.NoError(t, ingest.Read(context.Background(), ingest.OpenAIChat, strings.NewReader(body), r, nil))
	assert.Equal(t, "ab\ufffdc!", r.text())
	assert.Equal(t, call{Method: "complete", Text: "stop"}, r.last())
}

func TestFrameTooLarge(t *testing.T) {
	big := "data: {\"type\":\"response.output_text.delta\",\"delta\":\"" + strings.Repeat("x", 2000) + "\"}\n\n"
	r := &recorder{}
	err := ingest.Read(context.Background(), ingest.OpenAIResponses, strings.NewReader(big), r, &ingest.Options{MaxFrameBytes: 1024})
	assert.ErrorIs(t, err, refusal.ErrFrameTooLarge)
	assert.Equal(t, ingest.CodeInvalidStream, r.last().Code)
}

func TestProviderErrorOutsideTheStream(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		code   chatprotocol.ErrorCode
	}{
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, ingest.CodeOverloaded},
		{429, `{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}`, ingest.CodeError},
		{429, `{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}`, ingest.CodeRateLimited},
		{503, ``, ingest.CodeOverloaded},
		{502, `<html>bad gateway</html>`, ingest.CodeServerError},
		{504, ``, ingest.CodeTimeout},
		{408, ``, ingest.CodeTimeout},
		{400, `{"error":{"message":"bad","type":"invalid_request_error"}}`, ingest.CodeError},
	} {
		r := &recorder{}
		m, err := ingest.NewMapper(ingest.AnthropicMessages, r, nil)
		require.NoError(t, err)
		require.NoError(t, m.ProviderError(context.Background(), c.status, []byte(c.body)))
		assert.True(t, m.Done())
		assert.Equal(t, c.code, r.last().Code, "%d %s", c.status, c.body)
		assert.Equal(t, ingest.Transient(c.code), r.last().Retryable)
	}
	_, err := ingest.NewMapper("gemini", &recorder{}, nil)
	assert.Error(t, err)
}

// observer records the events it is given.
type observer struct{ events []observe.Event }

func (o *observer) Observe(ctx context.Context, e observe.Event) context.Context {
	o.events = append(o.events, e)
	return ctx
}

func TestObserverGetsTheModelResponse(t *testing.T) {
	o := &observer{}
	_, err := read(t, ingest.AnthropicMessages, "usage-cache", &ingest.Options{Observer: o, Conversation: "c", Turn: "t", RequestModel: "claude-sonnet-4-5"})
	require.NoError(t, err)
	require.Len(t, o.events, 1)
	assert.Equal(t, observe.Event{Kind: observe.ModelResponse, Conversation: "c", Turn: "t", Status: "completed",
		Provider: "anthropic", RequestModel: "claude-sonnet-4-5", ResponseModel: "claude-sonnet-4-5-20250929", ResponseID: "msg_01XFDUDYJgAACzvnptvVoYEL",
		InputTokens: 12 + 1024 + 2048, OutputTokens: 28}, o.events[0])

	o = &observer{}
	_, err = read(t, ingest.OpenAIChat, "cut", &ingest.Options{Observer: o})
	require.NoError(t, err)
	require.Len(t, o.events, 1)
	assert.Equal(t, "failed", o.events[0].Status)
	assert.Equal(t, int64(-1), o.events[0].InputTokens, "none sent: unknown, never zero")
	assert.Equal(t, int64(-1), o.events[0].OutputTokens)
}

func TestParseKind(t *testing.T) {
	for _, k := range ingest.Kinds() {
		got, err := ingest.ParseKind(string(k))
		require.NoError(t, err)
		assert.Equal(t, k, got)
	}
	_, err := ingest.ParseKind("openai")
	assert.Error(t, err)
}

func TestInvalidUTF8IsReplaced(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\xffb\xc3\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
	got, err := envelopes(t, ingest.OpenAIChat, strings.NewReader(body))
	require.NoError(t, err, "the envelopes are valid: the state applied them")
	assert.Contains(t, string(got), `"text":"a`+"\ufffd"+`b`+"\ufffd"+`"`)
}

// TestReadToEnd: ReadToEnd makes the turn Read makes of every fixture,
// and then reads the body on: a frame with data after the turn ended (the
// frames after an invalid one included) or a body cut inside a frame there
// is ErrTrailing; comments and blank frames after the end are nothing.
func TestReadToEnd(t *testing.T) {
	for kind, names := range fixtures(t) {
		for _, name := range names {
			base := filepath.Join(providers, string(kind), name)
			body, err := os.ReadFile(base + ".sse")
			require.NoError(t, err)
			r, err := read(t, kind, name, nil)
			whole := &recorder{}
			errToEnd := ingest.ReadToEnd(context.Background(), kind, bytes.NewReader(body), whole, nil)
			assert.Equal(t, r.calls, whole.calls, "%s/%s", kind, name)
			switch {
			case strings.Contains(name, "inside-frame"):
				assert.ErrorIs(t, errToEnd, ingest.ErrCut, "%s/%s", kind, name)
			case name == "invalid-frame" && kind != ingest.OpenAIResponses: // frames follow the invalid one; in Responses' it is the last
				require.NoError(t, err, "%s/%s", kind, name)
				assert.ErrorIs(t, errToEnd, ingest.ErrTrailing, "%s/%s", kind, name)
			default:
				require.NoError(t, err, "%s/%s", kind, name)
				assert.NoError(t, errToEnd, "%s/%s", kind, name)
			}
		}
	}
	done := "data: {\"id\":\"x\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	for _, c := range []struct {
		name, after string
		trailing    bool
	}{
		{"nothing", "", false},
		{"a comment and blank lines", ": keep-alive\n\n\n\n", false},
		{"a frame without data", "event: ping\n\n", false},
		{"a data frame", "data: {\"choices\":[]}\n\n", true},
		{"a cut frame", "data: {\"cho", true},
		{"another DONE", "data: [DONE]\n\n", true},
	} {
		r := &recorder{}
		err := ingest.ReadToEnd(context.Background(), ingest.OpenAIChat, strings.NewReader(done+c.after), r, nil)
		if c.trailing {
			assert.ErrorIs(t, err, ingest.ErrTrailing, c.name)
			assert.NotErrorIs(t, err, ingest.ErrCut, c.name)
		} else {
			assert.NoError(t, err, c.name)
		}
		assert.Equal(t, call{Method: "complete", Text: "stop"}, r.last(), "%s: the turn is Read's", c.name)
		require.NoError(t, ingest.Read(context.Background(), ingest.OpenAIChat, strings.NewReader(done+c.after), &recorder{}, nil), "%s: Read stops at the end", c.name)
	}
}
