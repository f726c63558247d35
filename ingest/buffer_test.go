package ingest_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// generated is a body made on the fly: head, then frame n times, then
// tail; read counts the bytes handed out.
type generated struct {
	parts []string
	frame string
	n     int
	read  int64
	cur   string
}

func generate(head, frame string, n int, tail string) *generated {
	return &generated{parts: []string{tail}, frame: frame, n: n, cur: head}
}

func (g *generated) Read(b []byte) (int, error) {
	for g.cur == "" {
		switch {
		case g.n > 0:
			g.n--
			g.cur = g.frame
		case len(g.parts) > 0:
			g.cur, g.parts = g.parts[0], g.parts[1:]
		default:
			return 0, io.EOF
		}
	}
	n := copy(b, g.cur)
	g.cur = g.cur[n:]
	g.read += int64(n)
	return n, nil
}

// sinkBytes is how many bytes of text and input the recorder was handed.
func (r *recorder) sinkBytes() int {
	n := 0
	for _, c := range r.calls {
		n += len(c.Text) + len(c.Input)
	}
	return n
}

// TestBufferedBytesAreBounded: 50 MB of argument or refusal fragments,
// made on the fly, are refused with frame-too-large once they pass
// Options.MaxBufferedBytes: the turn fails cleanly with
// provider-invalid-stream, nothing over the bound reaches the sink, and
// the reader stops reading soon after the bound.
func TestBufferedBytesAreBounded(t *testing.T) {
	chunk := strings.Repeat("a", 64<<10)
	const total = 50 << 20
	frames := total / len(chunk)
	cases := []struct {
		kind              ingest.Kind
		head, frame, tail string
		path              string
	}{
		{ingest.OpenAIChat,
			`data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{\"k\":\""}}]}}]}` + "\n\n",
			`data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + chunk + `"}}]}}]}` + "\n\n",
			`data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n",
			"/event/input"},
		{ingest.OpenAIResponses,
			`data: {"type":"response.output_item.added","item":{"id":"fc_1","type":"function_call","call_id":"call_1","name":"f","arguments":""}}` + "\n\n",
			`data: {"type":"response.function_call_arguments.delta","item_id":"fc_1","delta":"` + chunk + `"}` + "\n\n",
			`data: {"type":"response.output_item.done","item":{"id":"fc_1","type":"function_call","status":"completed","call_id":"call_1","name":"f"}}` + "\n\n" +
				`data: {"type":"response.completed","response":{"id":"resp_1","model":"m"}}` + "\n\n",
			"/event/input"},
		{ingest.AnthropicMessages,
			`data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"f","input":{}}}` + "\n\n",
			`data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"` + chunk + `"}}` + "\n\n",
			`data: {"type":"content_block_stop","index":0}` + "\n\n" + `data: {"type":"message_stop"}` + "\n\n",
			"/event/input"},
		{ingest.OpenAIChat,
			`data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"role":"assistant"}}]}` + "\n\n",
			`data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"refusal":"` + chunk + `"}}]}` + "\n\n",
			`data: {"id":"x","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n",
			"/event/message"},
		{ingest.OpenAIResponses,
			`data: {"type":"response.created","response":{"id":"resp_1","model":"m"}}` + "\n\n",
			`data: {"type":"response.refusal.delta","delta":"` + chunk + `"}` + "\n\n",
			`data: {"type":"response.completed","response":{"id":"resp_1","model":"m"}}` + "\n\n",
			"/event/message"},
	}
	for _, c := range cases {
		label := string(c.kind) + c.path
		body := generate(c.head, c.frame, frames, c.tail)
		r := &recorder{}
		err := ingest.Read(context.Background(), c.kind, body, r, nil)
		require.Error(t, err, label)
		assert.Equal(t, refusal.CodeFrameTooLarge, refusal.CodeOf(err), label)
		assert.ErrorIs(t, err, refusal.ErrFrameTooLarge, label)
		var re *refusal.Error
		require.True(t, errors.As(err, &re), label)
		assert.Equal(t, c.path, re.Path, label)

		assert.Empty(t, r.of("tool_call"), label)
		assert.Len(t, r.of("fail"), 1, label)
		assert.Equal(t, call{Method: "fail", Code: ingest.CodeInvalidStream, Text: r.last().Text}, r.last(), label)
		assert.Less(t, r.sinkBytes(), ingest.DefaultMaxBufferedBytes, label)
		assert.Less(t, body.read, int64(ingest.DefaultMaxBufferedBytes+4*len(c.frame)), "%s: the reader stopped soon after the bound", label)
	}
}

// TestMaxBufferedBytesOption: the bound is the option's when set, and
// arguments at the bound are taken.
func TestMaxBufferedBytesOption(t *testing.T) {
	assert.Equal(t, chatprotocol.DefaultMaxFrameBytes, ingest.DefaultMaxBufferedBytes)
	body := func(args string) io.Reader {
		return strings.NewReader(`data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"name":"f","arguments":"{\"k\":"}}]}}]}` + "\n\n" +
			`data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + args + `}"}}]},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	}
	opts := &ingest.Options{MaxBufferedBytes: 16}
	r := &recorder{}
	require.NoError(t, ingest.Read(context.Background(), ingest.OpenAIChat, body("1234567890"), r, opts)) // 16 bytes
	assert.Equal(t, []call{{Method: "tool_call", CallID: "call_1", Name: "f", Input: `{"k":1234567890}`}}, r.of("tool_call"))

	r = &recorder{}
	err := ingest.Read(context.Background(), ingest.OpenAIChat, body("12345678901"), r, opts) // 17 bytes
	assert.Equal(t, refusal.CodeFrameTooLarge, refusal.CodeOf(err))
	assert.Empty(t, r.of("tool_call"))
	assert.Equal(t, ingest.CodeInvalidStream, r.last().Code)
}
