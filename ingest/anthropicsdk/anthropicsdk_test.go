package anthropicsdk_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/ingest/anthropicsdk"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
)

const providers = "../../testdata/providers"

// replay serves body as the answer to every request, with status.
func replay(t *testing.T, status int, contentType string, body []byte) *anthropic.Client {
	t.Helper()
	c := anthropic.NewClient(option.WithBaseURL(ingestkit.Serve(t, status, contentType, body)), option.WithAPIKey("test"), option.WithMaxRetries(0))
	return &c
}

func params() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     anthropic.Model("claude-sonnet-4-5-20250929"),
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
	}
}

// TestFixturesThroughTheSDK: every recorded Messages body, served on
// loopback to the real client, makes the fixture's envelopes, and the SDK's
// own accumulation beside it sees the same message.
func TestFixturesThroughTheSDK(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(providers, "anthropic-messages", "*.sse"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(paths), 8)
	for _, path := range paths {
		body, err := os.ReadFile(path)
		require.NoError(t, err)
		want, err := os.ReadFile(strings.TrimSuffix(path, ".sse") + ".jsonl")
		require.NoError(t, err)
		stream := replay(t, 200, "text/event-stream", body).Messages.NewStreaming(context.Background(), params())
		var got bytes.Buffer
		var msg anthropic.Message
		require.NoError(t, anthropicsdk.Read(context.Background(), stream, ingestkit.Collect(&got), &anthropicsdk.Options{
			OnEvent: func(ev anthropic.MessageStreamEventUnion) { _ = msg.Accumulate(ev) },
		}), path)
		require.NoError(t, stream.Close())
		assert.Equal(t, string(want), got.String(), path)
		if strings.HasSuffix(path, "/thinking-text.sse") {
			require.Len(t, msg.Content, 2)
			assert.Equal(t, "thinking", msg.Content[0].Type)
			assert.NotEmpty(t, msg.Content[0].Signature, "the host keeps the thinking block to send back")
		}
	}
}

func TestHTTPErrors(t *testing.T) {
	for _, c := range []struct {
		status    int
		body      string
		code      chatprotocol.ErrorCode
		retryable bool
	}{
		{529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`, ingest.CodeOverloaded, true},
		{429, `{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your per-minute rate limit"}}`, ingest.CodeRateLimited, true},
		{500, `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}`, ingest.CodeServerError, true},
		{400, `{"type":"error","error":{"type":"invalid_request_error","message":"messages: at least one message is required"}}`, ingest.CodeError, false},
		{504, `<html>gateway timeout</html>`, ingest.CodeTimeout, true},
	} {
		stream := replay(t, c.status, "application/json", []byte(c.body)).Messages.NewStreaming(context.Background(), params())
		var got bytes.Buffer
		require.NoError(t, anthropicsdk.Read(context.Background(), stream, ingestkit.Collect(&got), nil))
		lines := strings.Split(strings.TrimSuffix(got.String(), "\n"), "\n")
		require.Len(t, lines, 4, got.String())
		env, err := chatprotocol.ParseEnvelope([]byte(lines[2]))
		require.NoError(t, err)
		e := env.Event.(*chatprotocol.ErrorEvent)
		assert.Equal(t, c.code, e.Code, "%d", c.status)
		assert.Equal(t, c.retryable, e.Retryable, "%d", c.status)
	}
}
