package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
)

// discard is a Sink that keeps nothing.
type discard struct{}

func (discard) Provenance(context.Context, string, string, string) error { return nil }
func (discard) Delta(context.Context, string) error                      { return nil }
func (discard) AnnounceToolCall(context.Context, string, string, json.RawMessage) error {
	return nil
}
func (discard) Usage(context.Context, chatprotocol.Usage) error                  { return nil }
func (discard) Complete(context.Context, string) error                           { return nil }
func (discard) Fail(context.Context, chatprotocol.ErrorCode, string, bool) error { return nil }

// manyCalls is a body of kind with n tool calls, each in two frames (its
// start and one argument fragment, found again by its key), then the end.
func manyCalls(kind ingest.Kind, n int) []byte {
	var b bytes.Buffer
	for i := range n {
		s := strconv.Itoa(i)
		switch kind {
		case ingest.OpenAIChat:
			b.WriteString(`data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":` + s + `,"id":"call_` + s + `","function":{"name":"f","arguments":"{\"k\":"}}]}}]}` + "\n\n")
			b.WriteString(`data: {"id":"x","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":` + s + `,"function":{"arguments":"` + s + `}"}}]}}]}` + "\n\n")
		case ingest.OpenAIResponses:
			b.WriteString(`data: {"type":"response.function_call_arguments.delta","item_id":"fc_` + s + `","delta":"{\"k\":` + s + `}"}` + "\n\n")
			b.WriteString(`data: {"type":"response.output_item.done","item":{"id":"fc_` + s + `","type":"function_call","status":"completed","call_id":"call_` + s + `","name":"f"}}` + "\n\n")
		case ingest.AnthropicMessages:
			b.WriteString(`data: {"type":"content_block_start","index":` + s + `,"content_block":{"type":"tool_use","id":"toolu_` + s + `","name":"f","input":{}}}` + "\n\n")
			b.WriteString(`data: {"type":"content_block_delta","index":` + s + `,"delta":{"type":"input_json_delta","partial_json":"{\"k\":` + s + `}"}}` + "\n\n")
		}
	}
	switch kind {
	case ingest.OpenAIChat:
		b.WriteString(`data: {"id":"x","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	case ingest.OpenAIResponses:
		b.WriteString(`data: {"type":"response.completed","response":{"id":"resp_1","model":"m"}}` + "\n\n")
	case ingest.AnthropicMessages:
		b.WriteString(`data: {"type":"message_stop"}` + "\n\n")
	}
	return b.Bytes()
}

// BenchmarkManyToolCalls reads a turn of n tool calls and reports the cost
// per call (ns/call), which stays flat as n grows: a call is found by its
// key in constant time. Anthropic's calls are content blocks, bounded at
// 4,096 a message.
func BenchmarkManyToolCalls(b *testing.B) {
	for _, c := range []struct {
		kind  ingest.Kind
		sizes []int
	}{
		{ingest.OpenAIChat, []int{1_000, 100_000}},
		{ingest.OpenAIResponses, []int{1_000, 100_000}},
		{ingest.AnthropicMessages, []int{1_000, 4_000}},
	} {
		for _, n := range c.sizes {
			body := manyCalls(c.kind, n)
			b.Run(string(c.kind)+"/calls="+strconv.Itoa(n), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					if err := ingest.Read(context.Background(), c.kind, bytes.NewReader(body), discard{}, nil); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/call")
			})
		}
	}
}

// TestManyCallsFoundByKey: each call of a long turn gets its own fragments,
// found by its key, and the calls are announced in order.
func TestManyCallsFoundByKey(t *testing.T) {
	for _, kind := range ingest.Kinds() {
		const n = 300
		r := &recorder{}
		require.NoError(t, ingest.Read(context.Background(), kind, bytes.NewReader(manyCalls(kind, n)), r, nil))
		calls := r.of("tool_call")
		require.Len(t, calls, n, kind)
		for i, c := range calls {
			s := strconv.Itoa(i)
			assert.Equal(t, `{"k":`+s+`}`, c.Input, kind)
			assert.True(t, strings.HasSuffix(c.CallID, "_"+s), "%s: %s", kind, c.CallID)
		}
		assert.Equal(t, "complete", r.last().Method, kind)
	}
}
