package ingest_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/readme"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// ExampleRead reads a recorded Anthropic stream into a turn producer on a
// memory window: text, then a tool call whose input came in fragments,
// then the usage and the end, as envelopes.
func ExampleRead() {
	ctx := context.Background()
	window := replay.NewMemory(nil)
	key := replay.Key{ConversationID: "c-1", TurnID: "t-1"}
	producer, err := turn.Start(ctx, window, key, &turn.Options{Now: func() time.Time { return time.Time{} }})
	if err != nil {
		panic(err)
	}
	// README:begin
	body, err := os.Open("../testdata/providers/anthropic-messages/tool-use.sse") // or the provider's resp.Body
	if err != nil {
		panic(err)
	}
	defer body.Close()
	err = ingest.Read(ctx, ingest.AnthropicMessages, body, ingest.ProducerSink(producer), &ingest.Options{
		Reasoning: func(ctx context.Context, thinking string) error { return nil }, // thinking never reaches the text
	})
	// README:end
	if err != nil {
		panic(err)
	}
	_, frames, err := window.Read(ctx, key, 0, replay.DefaultPageBytes)
	if err != nil {
		panic(err)
	}
	for _, f := range frames {
		fmt.Println(f.Type, string(f.Data[len(`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1",`):]))
	}
	// Output:
	// lifecycle "eventId":"t-1:1","seq":1,"event":{"type":"lifecycle","status":"started"}}
	// provenance "eventId":"t-1:2","seq":2,"event":{"type":"provenance","provider":"anthropic","model":"claude-sonnet-4-5-20250929","requestId":"msg_01XFDUDYJgAACzvnptvVoYEL"}}
	// delta "eventId":"t-1:3","seq":3,"event":{"type":"delta","text":"Okay, let's check the weather for San Francisco, CA:"}}
	// tool_call "eventId":"t-1:4","seq":4,"event":{"type":"tool_call","callId":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{"location":"San Francisco, CA","unit":"fahrenheit"}}}
	// lifecycle "eventId":"t-1:5","seq":5,"event":{"type":"lifecycle","status":"completed","reason":"tool_use","usage":{"totalTokens":561}}}
}

func TestReadmeSnippet(t *testing.T) {
	readme.SnippetIsExample(t, "../README.md", "Provider streams (ingest)", "example_test.go")
}
