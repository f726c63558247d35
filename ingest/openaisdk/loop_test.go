package openaisdk_test

import (
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest/openaisdk"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
)

// answerText is the text of the recorded answer steps.
const answerText = "It is 18°C and sunny in Paris, and the local time is 14:05."

// The agent loop on the real SDK's client, against the loopback provider:
// model → the two tools → model → answer, one turn ending completed, each
// tool launched once, the usage of both steps on the end; the second
// request carries the first step's calls and results.
func TestLoopRunsModelToolsModelOnTheChatModel(t *testing.T) {
	client, reqs := steps(t, "openai-chat/tool-then-answer-step1.sse", "openai-chat/tool-then-answer-step2.sse")
	var launched ingestkit.Launches
	loop := &agent.Loop{Model: &openaisdk.ChatModel{Client: client, Params: openai.ChatCompletionNewParams{Model: "gpt-4o-2024-08-06"}}, Tools: ingestkit.Tools(&launched)}
	out, tt := ingestkit.RunTurn(t, loop, question)
	ingestkit.AssertAnswered(t, out, tt, &launched, 2, answerText)
	bodies := reqs.Bodies()
	require.Len(t, bodies, 2)
	assert.JSONEq(t, `{"include_usage":true}`, member(t, bodies[0], "stream_options"), "the step's usage is asked for")
	assert.Contains(t, member(t, bodies[1], "messages"), `"role":"tool"`)
}

func TestLoopRunsModelToolsModelOnTheResponsesModel(t *testing.T) {
	client, reqs := steps(t, "openai-responses/tool-then-answer-step1.sse", "openai-responses/tool-then-answer-step2.sse")
	var launched ingestkit.Launches
	loop := &agent.Loop{Model: &openaisdk.ResponsesModel{Client: client, Params: responses.ResponseNewParams{Model: "o4-mini"}}, Tools: ingestkit.Tools(&launched)}
	out, tt := ingestkit.RunTurn(t, loop, question)
	ingestkit.AssertAnswered(t, out, tt, &launched, 2, answerText)
	bodies := reqs.Bodies()
	require.Len(t, bodies, 2)
	in := member(t, bodies[1], "input")
	assert.Contains(t, in, `"type":"function_call_output"`)
	assert.Contains(t, in, `"type":"reasoning"`, "the step's reasoning item goes back")
}
