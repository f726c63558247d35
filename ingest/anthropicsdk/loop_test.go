package anthropicsdk_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
)

// The agent loop on the real SDK's client, against the loopback provider:
// model → the two tools → model → answer, one turn ending completed, each
// tool launched once; the second request answers every tool_use.
func TestLoopRunsModelToolsModelOnTheMessagesModel(t *testing.T) {
	client, reqs := steps(t, "tool-then-answer-step1.sse", "tool-then-answer-step2.sse")
	var launched ingestkit.Launches
	out, tt := ingestkit.RunTurn(t, &agent.Loop{Model: model(client), Tools: ingestkit.Tools(&launched)}, question)
	ingestkit.AssertAnswered(t, out, tt, &launched, 2, "It is 18°C and sunny in Paris, and the local time is 14:05.")
	bodies := reqs.Bodies()
	require.Len(t, bodies, 2)
	assert.Equal(t, 2, strings.Count(member(t, bodies[1], "messages"), `"type":"tool_result"`))
}

// With extended thinking, the loop passes the step's signed thinking back
// on the next request, as the API requires of a tool_use's step.
func TestLoopPassesThinkingBack(t *testing.T) {
	client, reqs := steps(t, "thinking-tool-then-answer-step1.sse", "thinking-tool-then-answer-step2.sse")
	var launched ingestkit.Launches
	out, tt := ingestkit.RunTurn(t, &agent.Loop{Model: model(client), Tools: ingestkit.Tools(&launched)}, question)
	ingestkit.AssertAnswered(t, out, tt, &launched, 1, "It is 18°C and sunny in Paris.")
	bodies := reqs.Bodies()
	require.Len(t, bodies, 2)
	msgs := member(t, bodies[1], "messages")
	assert.Equal(t, 1, strings.Count(msgs, `"type":"thinking"`))
	assert.Contains(t, msgs, `"signature":"`)
	assert.Equal(t, 1, strings.Count(msgs, `"type":"redacted_thinking"`))
}
