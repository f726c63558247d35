package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/ingest"
)

// TestToolCallCutAtLength: a response the provider cut at its token limit
// inside a tool call's arguments completes with the provider's stop reason
// and its usage; the calls before it are announced, the cut one is not.
func TestToolCallCutAtLength(t *testing.T) {
	for _, c := range []struct {
		kind ingest.Kind
		name string
		want []call
	}{
		{ingest.AnthropicMessages, "max-tokens-inside-tool-input", []call{
			{Method: "provenance", Provider: "anthropic", Model: "claude-sonnet-4-5-20250929", ID: "msg_01MaxTokensInsideToolInput0"},
			{Method: "delta", Text: "Checking both files."},
			{Method: "tool_call", CallID: "toolu_01Whole0000000000000000000", Name: "read_file", Input: `{"path":"/srv/a.txt"}`},
			{Method: "usage", Total: 472 + 64},
			{Method: "complete", Text: "max_tokens"},
		}},
		{ingest.OpenAIChat, "length-inside-tool-arguments", []call{
			{Method: "provenance", Provider: "openai", Model: "gpt-4o-2024-08-06", ID: "chatcmpl-BqLenInsideToolArgs0000000000"},
			{Method: "delta", Text: "Checking both orders."},
			{Method: "tool_call", CallID: "call_LengthWhole000000000000001", Name: "lookup_order", Input: `{"id":"A-7"}`},
			{Method: "usage", Total: 62},
			{Method: "complete", Text: "length"},
		}},
		{ingest.OpenAIResponses, "incomplete-inside-function-call", []call{
			{Method: "provenance", Provider: "openai", Model: "gpt-4.1-2025-04-14", ID: "resp_68a1c0de5f2c8190b7e4d3c2a1f0e9d80cd1e2f3a4b5c6d7"},
			{Method: "tool_call", CallID: "call_IncompleteWhole00000001", Name: "lookup_order", Input: `{"id":"A-7"}`},
			{Method: "usage", Total: 331},
			{Method: "complete", Text: "max_output_tokens"},
		}},
	} {
		r, err := read(t, c.kind, c.name, nil)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.want, r.calls, c.name)
	}
}

// TestAnthropicInvalidInputStillFails: a tool_use block whose input is not
// JSON fails the turn when the provider did not stop at its token limit,
// whatever follows the block's end.
func TestAnthropicInvalidInputStillFails(t *testing.T) {
	const head = `data: {"type":"message_start","message":{"id":"msg_1","model":"m","usage":{"input_tokens":5,"output_tokens":1}}}

data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}

data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}

data: {"type":"content_block_stop","index":0}

`
	for label, tail := range map[string]string{
		"end_turn": `data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}

data: {"type":"message_stop"}

`,
		"a text block": `data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":"more"}}

`,
		"a cut":        ``,
		"ping":         "data: {\"type\":\"ping\"}\n\n",
		"error":        `data: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}` + "\n\n",
		"message_stop": `data: {"type":"message_stop"}` + "\n\n",
	} {
		r := &recorder{}
		require.NoError(t, ingest.Read(context.Background(), ingest.AnthropicMessages, strings.NewReader(head+tail), r, nil), label)
		assert.Empty(t, r.of("delta"), label)
		assert.Empty(t, r.of("tool_call"), label)
		assert.Equal(t, ingest.CodeInvalidToolCall, r.last().Code, label)
	}
}

// TestChatLengthKeepsWholeCalls: at finish reason length only the last
// call, when its arguments are not whole, is the cut one; an earlier call
// with broken arguments still fails the turn, and a last call that is whole
// is announced.
func TestChatLengthKeepsWholeCalls(t *testing.T) {
	chunk := func(index int, id, name, args string) string {
		return `data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":` + string(rune('0'+index)) +
			`,"id":"` + id + `","function":{"name":"` + name + `","arguments":` + args + `}}]}}]}` + "\n\n"
	}
	const end = `data: {"id":"x","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"length"}]}` + "\n\ndata: [DONE]\n\n"

	r := &recorder{}
	body := chunk(0, "call_1", "a", `"{\"k\":1}"`) + chunk(1, "call_2", "b", `"{\"k\":2}"`) + end
	require.NoError(t, ingest.Read(context.Background(), ingest.OpenAIChat, strings.NewReader(body), r, nil))
	assert.Len(t, r.of("tool_call"), 2)
	assert.Equal(t, call{Method: "complete", Text: "length"}, r.last())

	r = &recorder{}
	body = chunk(0, "call_1", "a", `"{\"k\":"`) + chunk(1, "call_2", "b", `"{\"k\":"`) + end
	require.NoError(t, ingest.Read(context.Background(), ingest.OpenAIChat, strings.NewReader(body), r, nil))
	assert.Empty(t, r.of("tool_call"))
	assert.Equal(t, ingest.CodeInvalidToolCall, r.last().Code)

	r = &recorder{}
	body = chunk(0, "call_1", "a", `"{\"k\":1}"`) + chunk(1, "call_2", "b", `""`) + end
	require.NoError(t, ingest.Read(context.Background(), ingest.OpenAIChat, strings.NewReader(body), r, nil))
	assert.Equal(t, []call{{Method: "tool_call", CallID: "call_1", Name: "a", Input: `{"k":1}`}}, r.of("tool_call"),
		"a call cut before its first argument byte is not announced")
	assert.Equal(t, call{Method: "complete", Text: "length"}, r.last())
}

// TestResponsesIncompleteItemNeverSent: a function_call item done with
// status incomplete is never announced, even when its arguments parse.
func TestResponsesIncompleteItemNeverSent(t *testing.T) {
	body := `data: {"type":"response.output_item.done","item":{"id":"fc_1","type":"function_call","status":"incomplete","arguments":"{}","call_id":"call_1","name":"f"}}

data: {"type":"response.incomplete","response":{"id":"resp_1","model":"m","incomplete_details":{"reason":"max_output_tokens"},"usage":{"input_tokens":3,"output_tokens":4,"total_tokens":7}}}

`
	r := &recorder{}
	require.NoError(t, ingest.Read(context.Background(), ingest.OpenAIResponses, strings.NewReader(body), r, nil))
	assert.Equal(t, []call{
		{Method: "provenance", Provider: "openai", Model: "m", ID: "resp_1"},
		{Method: "usage", Total: 7},
		{Method: "complete", Text: "max_output_tokens"},
	}, r.calls)
}
