package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/readme"
)

// printer is a Sink that prints what it is given, standing for a host's
// turn producer.
type printer struct{}

func (printer) Provenance(_ context.Context, provider, model, id string) error {
	fmt.Println("provenance", provider, model, id)
	return nil
}
func (printer) Delta(_ context.Context, text string) error {
	fmt.Printf("delta %q\n", text)
	return nil
}
func (printer) AnnounceToolCall(_ context.Context, id, name string, input json.RawMessage) error {
	fmt.Println("tool_call", id, name, string(input))
	return nil
}
func (printer) Usage(_ context.Context, u chatprotocol.Usage) error {
	fmt.Println("usage", *u.TotalTokens)
	return nil
}
func (printer) Complete(_ context.Context, reason string) error {
	fmt.Println("completed", reason)
	return nil
}
func (printer) Fail(_ context.Context, code chatprotocol.ErrorCode, message string, retryable bool) error {
	fmt.Println("failed", code, message, retryable)
	return nil
}

// ExampleRead reads a recorded Anthropic stream: text, then a tool call
// whose input came in fragments, then the usage and the end.
func ExampleRead() {
	ctx := context.Background()
	producer := printer{}
	// README:begin
	body, err := os.Open("../testdata/providers/anthropic-messages/tool-use.sse") // or the provider's resp.Body
	if err != nil {
		panic(err)
	}
	defer body.Close()
	err = ingest.Read(ctx, ingest.AnthropicMessages, body, producer, &ingest.Options{
		Reasoning: func(ctx context.Context, thinking string) error { return nil }, // thinking never reaches the text
	})
	// README:end
	if err != nil {
		panic(err)
	}
	// Output:
	// provenance anthropic claude-sonnet-4-5-20250929 msg_01XFDUDYJgAACzvnptvVoYEL
	// delta "Okay, let's check the weather for San Francisco, CA:"
	// tool_call toolu_01T1x1fJ34qAmk2tNTrN7Up6 get_weather {"location":"San Francisco, CA","unit":"fahrenheit"}
	// usage 561
	// completed tool_use
}

func TestReadmeSnippet(t *testing.T) {
	readme.SnippetIsExample(t, "../README.md", "Provider streams (ingest)", "example_test.go")
}
