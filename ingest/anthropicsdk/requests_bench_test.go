package anthropicsdk_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest/anthropicsdk"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
)

// BenchmarkRequest compares building the next request from a conversation
// of 100 turns and encoding it (build+marshal) with encoding the same
// request built beforehand (marshal), and the building alone (build);
// thinking keeps a signed thinking block on every tool step.
func BenchmarkRequest(b *testing.B) {
	base := anthropic.MessageNewParams{Model: "claude-sonnet-4-5-20250929", MaxTokens: 2048}
	thinking := []agent.Reasoning{{Text: "The user asks for the weather and the time: two tools.", Signature: "EuYBCkQYAiJAk3Nq0x7vT2mR8pW4yL6cZ1bH5dF9gJ3kS0uV2wX4zA6bC8dE0fG2hI4jK6lM8nO0pQ2rS4tU6vW8xY0z"}}
	for _, c := range []struct {
		name string
		req  *agent.Request
	}{{"messages", ingestkit.Conversation(100, nil)}, {"messages-thinking", ingestkit.Conversation(100, thinking)}} {
		params := anthropicsdk.MessagesParams(c.req, base)
		b.Run(c.name+"/build", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				anthropicsdk.MessagesParams(c.req, base)
			}
		})
		b.Run(c.name+"/build+marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(anthropicsdk.MessagesParams(c.req, base)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
