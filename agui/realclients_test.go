package agui_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnhost"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/uiclients"
	"github.com/Papercusp/chat-protocol-go/recovery"
)

// rcRun is what agrun.mjs printed.
type rcRun struct {
	Runs []struct {
		Events  []map[string]any
		Outcome map[string]any
		Error   *string
	}
	Messages []map[string]any
}

// TestRealClientHttpAgentRunsTheTurn runs @ag-ui/client's HttpAgent, with
// its event verification, against the bridge: the run whole, its tool call
// and result in the agent's messages, the card as an interrupt, and the
// next run's resume entry landing the answer through the Resolver.
func TestRealClientHttpAgentRunsTheTurn(t *testing.T) {
	f := newFixture(t, true)
	out := uiclients.Run(t, 60*time.Second, "agrun.mjs", f.srv.URL, "thread-1", `{"X-User":"alice"}`, `{"optionId":"yes"}`)
	var run rcRun
	require.NoError(t, json.Unmarshal(out, &run), string(out))
	require.Len(t, run.Runs, 2)
	first := run.Runs[0]
	require.Nil(t, first.Error)
	evs := first.Events
	assert.Equal(t, "RUN_STARTED", evs[0]["type"])
	assert.Equal(t, "RUN_FINISHED", evs[len(evs)-1]["type"])
	assert.Equal(t, turnscript.Text(), joined(evs, "TEXT_MESSAGE_CONTENT", "delta"))
	assert.Equal(t, turnscript.ToolInput, joined(evs, "TOOL_CALL_ARGS", "delta"))
	assert.Equal(t, "interrupt", first.Outcome["type"])
	assert.Equal(t, "card-t-1", first.Outcome["interrupts"].([]any)[0].(map[string]any)["id"])

	var text string
	var call, result bool
	for _, m := range run.Messages {
		switch m["role"] {
		case "assistant":
			if c, ok := m["content"].(string); ok {
				text += c
			}
			for _, tc := range asSlice(m["toolCalls"]) {
				fn := tc.(map[string]any)["function"].(map[string]any)
				call = call || (fn["name"] == turnscript.ToolName && fn["arguments"] == turnscript.ToolInput)
			}
		case "tool":
			result = result || (m["toolCallId"] == "t-1-call-1" && m["content"] == turnscript.ToolOutput)
		}
	}
	assert.Contains(t, text, turnscript.Text()[:10])
	assert.True(t, call, "the agent's messages hold the tool call: %v", run.Messages)
	assert.True(t, result, "the agent's messages hold the tool result: %v", run.Messages)

	second := run.Runs[1]
	require.Nil(t, second.Error)
	assert.Equal(t, "run-2", second.Events[0]["runId"])
	view, err := f.res.Lookup(context.Background(), interactions.Key{Conversation: "thread-1", CorrelationID: "card-t-1"})
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusAnswered, view.Record.Status)
	assert.JSONEq(t, `{"optionId":"yes"}`, string(view.Record.Answer.Value))
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestRealClientAbortRunCancelsTheTurn: @ag-ui/client's HttpAgent.abortRun()
// at the run's first text ends the server's turn cancelled, through
// recovery with the cancel endpoint's caller, within a second of the
// client's exit, long before the script would have completed the turn.
func TestRealClientAbortRunCancelsTheTurn(t *testing.T) {
	f := newStopFixture(t, 300*time.Millisecond, false)
	out := uiclients.Run(t, 60*time.Second, "agabort.mjs", f.srv.URL, "thread-1", `{"X-User":"`+turnhost.User+`"}`)
	var run struct {
		Events  []map[string]any
		Aborted bool
		Error   *string
	}
	require.NoError(t, json.Unmarshal(out, &run), string(out))
	require.True(t, run.Aborted, "the run saw no text to abort at: %s", out)
	assert.Equal(t, "RUN_STARTED", run.Events[0]["type"])
	for _, ev := range run.Events {
		assert.NotEqual(t, "RUN_FINISHED", ev["type"], "the run finished before its abort")
	}
	status, lifecycle := f.ended(t, <-f.keys, time.Second)
	assert.Equal(t, recovery.TurnCancelled, status)
	assert.Equal(t, chatprotocol.LifecycleCancelled, lifecycle)
}

// TestRealClientHttpAgentFollowsTheSteps: a turn of two model steps, the
// second still open when the card ends the run, passes HttpAgent's
// sequencing rules: each step started once and finished, the open one
// before RUN_FINISHED (docs/contract.md section 18.2).
func TestRealClientHttpAgentFollowsTheSteps(t *testing.T) {
	f := newFixture(t, true)
	f.host.SetSteps(true, true)
	out := uiclients.Run(t, 60*time.Second, "agrun.mjs", f.srv.URL, "thread-1", `{"X-User":"alice"}`, `null`)
	var run rcRun
	require.NoError(t, json.Unmarshal(out, &run), string(out))
	require.Len(t, run.Runs, 1)
	first := run.Runs[0]
	require.Nil(t, first.Error)
	var steps []string
	for _, ev := range first.Events {
		if typ := ev["type"].(string); strings.HasPrefix(typ, "STEP_") {
			steps = append(steps, typ+" "+ev["stepName"].(string))
		}
	}
	assert.Equal(t, []string{"STEP_STARTED step-1", "STEP_FINISHED step-1", "STEP_STARTED step-2", "STEP_FINISHED step-2"}, steps)
	assert.Equal(t, "RUN_FINISHED", first.Events[len(first.Events)-1]["type"])
	assert.Equal(t, "interrupt", first.Outcome["type"])
	assert.Equal(t, turnscript.Text(), joined(first.Events, "TEXT_MESSAGE_CONTENT", "delta"))
}
