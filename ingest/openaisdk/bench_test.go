package openaisdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
	"github.com/Papercusp/chat-protocol-go/internal/turnsink"
)

// benchDeltas is how many text deltas a benchmark body has, beside a tool
// call of benchFragments argument fragments.
const (
	benchDeltas    = 1000
	benchFragments = 100
)

// words are the texts of the deltas, as a model streams them.
var words = []string{"The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", ".", " Caf\u00e9", " \u2014", " \"quoted\"", "\n"}

// chatBody is a Chat Completions body: benchDeltas content chunks, a tool
// call in benchFragments fragments, the finish reason, usage and [DONE].
func chatBody() []byte {
	var b bytes.Buffer
	chunk := func(choices string, usage string) {
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-BqJ9xT3m1ZkL0aP8vR2sN7yQ4wE6u","object":"chat.completion.chunk","created":1751980800,"model":"gpt-4o-2024-08-06","service_tier":"default","system_fingerprint":"fp_07871e2ad8","choices":[%s],"usage":%s,"obfuscation":"Xy1"}`+"\n\n", choices, usage)
	}
	chunk(`{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}`, "null")
	for i := range benchDeltas {
		text, _ := json.Marshal(words[i%len(words)])
		chunk(`{"index":0,"delta":{"content":`+string(text)+`},"logprobs":null,"finish_reason":null}`, "null")
	}
	chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_Vq3kVbOVn8YRm0fmJ6cXpgTQ","type":"function","function":{"name":"get_weather","arguments":""}}]},"logprobs":null,"finish_reason":null}`, "null")
	chunk(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"items\":["}}]},"logprobs":null,"finish_reason":null}`, "null")
	for i := range benchFragments {
		sep := ","
		if i == benchFragments-1 {
			sep = "]}"
		}
		chunk(fmt.Sprintf(`{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"%d%s"}}]},"logprobs":null,"finish_reason":null}`, i, sep), "null")
	}
	chunk(`{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}`, "null")
	b.WriteString(`data: {"id":"chatcmpl-BqJ9xT3m1ZkL0aP8vR2sN7yQ4wE6u","object":"chat.completion.chunk","created":1751980800,"model":"gpt-4o-2024-08-06","choices":[],"usage":{"prompt_tokens":82,"completion_tokens":1051,"total_tokens":1133,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// responsesBody is a Responses body: benchDeltas output_text.delta events,
// the text's done events, a function call in benchFragments argument
// deltas, and response.completed with the whole output again.
func responsesBody() []byte {
	var b bytes.Buffer
	seq := 0
	ev := func(typ, rest string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q,%s,\"sequence_number\":%d}\n\n", typ, typ, rest, seq)
		seq++
	}
	const msg = "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b"
	const fc = "fc_67ca09c6bedc8190a7abfec07b1a1332096610f474011cc0"
	resp := func(status, output, usage string) string {
		return `"response":{"id":"resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b","object":"response","created_at":1741476542,"status":"` + status + `","error":null,"incomplete_details":null,"model":"gpt-4.1-2025-04-14","output":[` + output + `],"parallel_tool_calls":true,"tool_choice":"auto","tools":[],"usage":` + usage + `}`
	}
	ev("response.created", resp("in_progress", "", "null"))
	ev("response.in_progress", resp("in_progress", "", "null"))
	ev("response.output_item.added", `"output_index":0,"item":{"id":"`+msg+`","type":"message","status":"in_progress","content":[],"role":"assistant"}`)
	ev("response.content_part.added", `"item_id":"`+msg+`","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":""}`)
	var text strings.Builder
	for i := range benchDeltas {
		w := words[i%len(words)]
		text.WriteString(w)
		q, _ := json.Marshal(w)
		ev("response.output_text.delta", `"item_id":"`+msg+`","output_index":0,"content_index":0,"delta":`+string(q)+`,"logprobs":[],"obfuscation":"x1"`)
	}
	full, _ := json.Marshal(text.String())
	ev("response.output_text.done", `"item_id":"`+msg+`","output_index":0,"content_index":0,"text":`+string(full)+`,"logprobs":[]`)
	ev("response.content_part.done", `"item_id":"`+msg+`","output_index":0,"content_index":0,"part":{"type":"output_text","annotations":[],"logprobs":[],"text":`+string(full)+`}`)
	item := `{"id":"` + msg + `","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":` + string(full) + `}],"role":"assistant"}`
	ev("response.output_item.done", `"output_index":0,"item":`+item)
	ev("response.output_item.added", `"output_index":1,"item":{"id":"`+fc+`","type":"function_call","status":"in_progress","arguments":"","call_id":"call_unLAR8MvFNptuiZK6K6HCy5k","name":"get_weather"}`)
	var args strings.Builder
	args.WriteString(`{"items":[`)
	ev("response.function_call_arguments.delta", `"item_id":"`+fc+`","output_index":1,"delta":"{\"items\":["`)
	for i := range benchFragments {
		sep := ","
		if i == benchFragments-1 {
			sep = "]}"
		}
		args.WriteString(fmt.Sprintf("%d%s", i, sep))
		ev("response.function_call_arguments.delta", fmt.Sprintf(`"item_id":"%s","output_index":1,"delta":"%d%s"`, fc, i, sep))
	}
	a, _ := json.Marshal(args.String())
	ev("response.function_call_arguments.done", `"item_id":"`+fc+`","output_index":1,"arguments":`+string(a))
	call := `{"id":"` + fc + `","type":"function_call","status":"completed","arguments":` + string(a) + `,"call_id":"call_unLAR8MvFNptuiZK6K6HCy5k","name":"get_weather"}`
	ev("response.output_item.done", `"output_index":1,"item":`+call)
	ev("response.completed", resp("completed", item+","+call, `{"input_tokens":36,"input_tokens_details":{"cached_tokens":0},"output_tokens":1087,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":1123}`))
	return b.Bytes()
}

// response is the http.Response the SDK's decoder reads body from.
func response(body []byte) *http.Response {
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(body))}
}

// lines is a Sink making canonical envelope lines into one reused buffer.
func lines() (ingest.Sink, *[]byte) {
	buf := make([]byte, 0, 4096)
	return turnsink.New("c-1", "t-1", func(env *chatprotocol.ChatEventEnvelope) error {
		var err error
		buf, err = env.AppendJSON(buf[:0])
		return err
	}), &buf
}

// BenchmarkIngest compares, over the same bytes from memory, the SDK's own
// stream decoding and accumulation with ingest.Read into a Sink that only
// counts (sdk vs ingest: the ratio of docs/contract.md section 17's reader
// to the SDK) and into the envelope-making turnsink (ingest-envelopes).
// Each reports ns and allocations per delta (text deltas and argument
// fragments).
func BenchmarkIngest(b *testing.B) {
	ctx := context.Background()
	chat, resp := chatBody(), responsesBody()
	const deltas = benchDeltas + benchFragments
	b.Run("chat/sdk", func(b *testing.B) {
		ingestkit.Measure(b, len(chat), deltas, func() error {
			stream := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(response(chat)), nil)
			var acc openai.ChatCompletionAccumulator
			for stream.Next() {
				acc.AddChunk(stream.Current())
			}
			if len(acc.Choices) != 1 || len(acc.Choices[0].Message.ToolCalls) != 1 {
				return errors.New("the accumulator lost the turn")
			}
			return stream.Err()
		})
	})
	b.Run("chat/ingest", func(b *testing.B) {
		ingestkit.Measure(b, len(chat), deltas, func() error {
			var c ingestkit.Counter
			err := ingest.Read(ctx, ingest.OpenAIChat, bytes.NewReader(chat), &c, nil)
			if err == nil && c.N != benchDeltas+4 {
				err = fmt.Errorf("%d calls", c.N)
			}
			return err
		})
	})
	b.Run("chat/ingest-envelopes", func(b *testing.B) {
		ingestkit.Measure(b, len(chat), deltas, func() error {
			sink, _ := lines()
			return ingest.Read(ctx, ingest.OpenAIChat, bytes.NewReader(chat), sink, nil)
		})
	})
	b.Run("responses/sdk", func(b *testing.B) {
		ingestkit.Measure(b, len(resp), deltas, func() error {
			stream := ssestream.NewStream[responses.ResponseStreamEventUnion](ssestream.NewDecoder(response(resp)), nil)
			// The SDK has no accumulator of Responses stream events: the
			// accumulation a host writes, text and arguments by item.
			var text strings.Builder
			args := map[string]*strings.Builder{}
			for stream.Next() {
				ev := stream.Current()
				switch ev.Type {
				case "response.output_text.delta":
					text.WriteString(ev.Delta)
				case "response.function_call_arguments.delta":
					if args[ev.ItemID] == nil {
						args[ev.ItemID] = &strings.Builder{}
					}
					args[ev.ItemID].WriteString(ev.Delta)
				}
			}
			if text.Len() == 0 || len(args) != 1 {
				return errors.New("the accumulation lost the turn")
			}
			return stream.Err()
		})
	})
	b.Run("responses/ingest", func(b *testing.B) {
		ingestkit.Measure(b, len(resp), deltas, func() error {
			var c ingestkit.Counter
			err := ingest.Read(ctx, ingest.OpenAIResponses, bytes.NewReader(resp), &c, nil)
			if err == nil && c.N != benchDeltas+4 {
				err = fmt.Errorf("%d calls", c.N)
			}
			return err
		})
	})
	b.Run("responses/ingest-envelopes", func(b *testing.B) {
		ingestkit.Measure(b, len(resp), deltas, func() error {
			sink, _ := lines()
			return ingest.Read(ctx, ingest.OpenAIResponses, bytes.NewReader(resp), sink, nil)
		})
	})
}
