package openaisdk_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/ingest/openaisdk"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
)

const providers = "../../testdata/providers"

// replay serves body as the answer to every request, with status.
func replay(t *testing.T, status int, contentType string, body []byte) *openai.Client {
	t.Helper()
	c := openai.NewClient(option.WithBaseURL(ingestkit.Serve(t, status, contentType, body)), option.WithAPIKey("test"), option.WithMaxRetries(0))
	return &c
}

func chatParams() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model:    "gpt-4o-2024-08-06",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	}
}

func responsesParams() responses.ResponseNewParams {
	return responses.ResponseNewParams{Model: "gpt-4o-2024-08-06", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")}}
}

func bodies(t *testing.T, kind ingest.Kind) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(providers, string(kind), "*.sse"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(paths), 8)
	return paths
}

// TestChatFixturesThroughTheSDK: every recorded Chat body, served on
// loopback to the real client, makes the fixture's envelopes.
func TestChatFixturesThroughTheSDK(t *testing.T) {
	for _, path := range bodies(t, ingest.OpenAIChat) {
		body, err := os.ReadFile(path)
		require.NoError(t, err)
		want, err := os.ReadFile(strings.TrimSuffix(path, ".sse") + ".jsonl")
		require.NoError(t, err)
		client := replay(t, 200, "text/event-stream", body)
		stream := client.Chat.Completions.NewStreaming(context.Background(), chatParams())
		var got bytes.Buffer
		var events int
		err = openaisdk.ReadChat(context.Background(), stream, ingestkit.Collect(&got), &openaisdk.Options[openai.ChatCompletionChunk]{
			OnEvent: func(openai.ChatCompletionChunk) { events++ },
		})
		require.NoError(t, err, path)
		require.NoError(t, stream.Close())
		assert.Equal(t, string(want), got.String(), path)
		if !strings.Contains(path, "error-not-transient") { // that body is its error frame alone
			assert.Positive(t, events, path)
		}
	}
}

func TestResponsesFixturesThroughTheSDK(t *testing.T) {
	for _, path := range bodies(t, ingest.OpenAIResponses) {
		body, err := os.ReadFile(path)
		require.NoError(t, err)
		want, err := os.ReadFile(strings.TrimSuffix(path, ".sse") + ".jsonl")
		require.NoError(t, err)
		client := replay(t, 200, "text/event-stream", body)
		stream := client.Responses.NewStreaming(context.Background(), responsesParams())
		var got bytes.Buffer
		require.NoError(t, openaisdk.ReadResponses(context.Background(), stream, ingestkit.Collect(&got), nil), path)
		require.NoError(t, stream.Close())
		assert.Equal(t, string(want), got.String(), path)
	}
}

// TestAccumulatorBeside: OnEvent lets the host keep the SDK's accumulator,
// which sees every chunk the reader mapped.
func TestAccumulatorBeside(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(providers, "openai-chat", "tool-calls-interleaved.sse"))
	require.NoError(t, err)
	stream := replay(t, 200, "text/event-stream", body).Chat.Completions.NewStreaming(context.Background(), chatParams())
	var acc openai.ChatCompletionAccumulator
	var got bytes.Buffer
	require.NoError(t, openaisdk.ReadChat(context.Background(), stream, ingestkit.Collect(&got), &openaisdk.Options[openai.ChatCompletionChunk]{
		OnEvent: func(c openai.ChatCompletionChunk) { acc.AddChunk(c) },
	}))
	require.Len(t, acc.Choices, 1)
	calls := acc.Choices[0].Message.ToolCalls
	require.Len(t, calls, 2)
	assert.Equal(t, "call_Vq3kVbOVn8YRm0fmJ6cXpgTQ", calls[0].ID)
	assert.Contains(t, got.String(), `"callId":"call_Vq3kVbOVn8YRm0fmJ6cXpgTQ","name":"get_weather"`)
}

// TestHTTPErrors: an error status the SDK returns after its retries fails
// the turn by the rule of docs/contract.md section 17.5.
func TestHTTPErrors(t *testing.T) {
	for _, c := range []struct {
		status    int
		body      string
		code      chatprotocol.ErrorCode
		retryable bool
	}{
		{429, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, ingest.CodeRateLimited, true},
		{429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, ingest.CodeError, false},
		{500, `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`, ingest.CodeServerError, true},
		{503, `upstream unavailable`, ingest.CodeOverloaded, true},
		{401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, ingest.CodeError, false},
	} {
		for _, kind := range []ingest.Kind{ingest.OpenAIChat, ingest.OpenAIResponses} {
			client := replay(t, c.status, "application/json", []byte(c.body))
			var got bytes.Buffer
			var err error
			if kind == ingest.OpenAIChat {
				err = openaisdk.ReadChat(context.Background(), client.Chat.Completions.NewStreaming(context.Background(), chatParams()), ingestkit.Collect(&got), nil)
			} else {
				err = openaisdk.ReadResponses(context.Background(), client.Responses.NewStreaming(context.Background(), responsesParams()), ingestkit.Collect(&got), nil)
			}
			require.NoError(t, err)
			lines := strings.Split(strings.TrimSuffix(got.String(), "\n"), "\n")
			require.Len(t, lines, 4, got.String())
			env, err := chatprotocol.ParseEnvelope([]byte(lines[2]))
			require.NoError(t, err)
			e := env.Event.(*chatprotocol.ErrorEvent)
			assert.Equal(t, c.code, e.Code, "%d %s", c.status, kind)
			assert.Equal(t, c.retryable, e.Retryable, "%d %s", c.status, kind)
			assert.Contains(t, lines[3], `"status":"failed"`)
		}
	}
}

// TestCutAfterFinishReason: a Chat stream ends at its finish reason, so a
// cut after it (here inside [DONE], which the SDK cannot even see) completes
// the turn through the SDK and through ingest.Read alike; Read still
// reports the cut.
func TestCutAfterFinishReason(t *testing.T) {
	body, err := os.ReadFile(filepath.Join(providers, "openai-chat", "text.sse"))
	require.NoError(t, err)
	cut := body[:bytes.LastIndex(body, []byte("data: [DONE]"))+len("data: [DO")]
	var got bytes.Buffer
	stream := replay(t, 200, "text/event-stream", cut).Chat.Completions.NewStreaming(context.Background(), chatParams())
	require.NoError(t, openaisdk.ReadChat(context.Background(), stream, ingestkit.Collect(&got), nil))
	assert.Contains(t, got.String(), `"status":"completed","reason":"stop","usage":{"totalTokens":29}`)

	var raw bytes.Buffer
	err = ingest.Read(context.Background(), ingest.OpenAIChat, bytes.NewReader(cut), ingestkit.Collect(&raw), nil)
	assert.ErrorIs(t, err, ingest.ErrCut)
	assert.Equal(t, got.String(), raw.String())
}
