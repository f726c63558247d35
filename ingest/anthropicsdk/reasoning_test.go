package anthropicsdk_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/ingest/anthropicsdk"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
)

// reasoningStep is a step's sink that is an ingest.ReasoningSink.
type reasoningStep struct {
	ingestkit.Step
	reasoning []string
}

func (s *reasoningStep) Reasoning(_ context.Context, text string) error {
	s.reasoning = append(s.reasoning, text)
	return nil
}

// TestMessagesModelStreamsThinking: with StreamReasoning, the thinking of
// a step reaches the sink as reasoning, never its text nor the signature,
// which the reply keeps for the next request (docs/contract.md sections
// 6.5 and 17.1).
func TestMessagesModelStreamsThinking(t *testing.T) {
	client, _ := steps(t, "thinking-tool-then-answer-step1.sse")
	m := model(client)
	m.Options = &anthropicsdk.Options{Options: ingest.Options{StreamReasoning: true}}
	req := &agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Text: "What is the weather in Paris?"}}, Tools: tools[:1]}
	var s reasoningStep
	reply, err := m.Step(context.Background(), req, &s)
	require.NoError(t, err)
	const thought = "The user asks for the weather in Paris.\nI should call get_weather with Paris, FR."
	assert.Equal(t, thought, strings.Join(s.reasoning, ""))
	assert.NotContains(t, s.Text, "The user asks")
	require.NotEmpty(t, reply.Reasoning)
	assert.Equal(t, thought, reply.Reasoning[0].Text)
	assert.NotEmpty(t, reply.Reasoning[0].Signature)
	for _, r := range s.reasoning {
		assert.NotContains(t, r, reply.Reasoning[0].Signature)
	}
}
