package openaisdk_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest/openaisdk"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
)

// benchTurns is how many turns the benchmarks' conversation has.
const benchTurns = 100

// BenchmarkRequest compares building the next request from a conversation
// of benchTurns turns and encoding it (build+marshal) with encoding the
// same request built beforehand (marshal): the builder's cost beside the
// SDK's encoding, which every request pays; name/build is the building
// alone. responses-reasoning keeps a reasoning item on every tool step.
func BenchmarkRequest(b *testing.B) {
	plain := ingestkit.Conversation(benchTurns, nil)
	reasoned := ingestkit.Conversation(benchTurns, []agent.Reasoning{{Item: json.RawMessage(`{"id":"rs_6871a3c1a2b4819e8c6d0e2f4a6b8c9d","type":"reasoning","summary":[],"encrypted_content":"gAAAAABocaPB7xQm2Lk9vR3nT8wZ1yFh5sJ0dK4pC6eV"}`)}})
	chat := openai.ChatCompletionNewParams{Model: "gpt-4o-2024-08-06"}
	resp := responses.ResponseNewParams{Model: "o4-mini-2025-04-16"}
	benchRequest(b, "chat", func() any { return openaisdk.ChatParams(plain, chat) })
	benchRequest(b, "responses", func() any { return openaisdk.ResponsesParams(plain, resp) })
	benchRequest(b, "responses-reasoning", func() any { return openaisdk.ResponsesParams(reasoned, resp) })
}

// benchRequest runs name/build+marshal, name/marshal and name/build of the
// request build makes.
func benchRequest(b *testing.B, name string, build func() any) {
	params := build()
	b.Run(name+"/build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			build()
		}
	})
	b.Run(name+"/build+marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(build()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(name+"/marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(params); err != nil {
				b.Fatal(err)
			}
		}
	})
}
