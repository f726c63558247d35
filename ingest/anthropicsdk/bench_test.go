package anthropicsdk_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/ingestkit"
	"github.com/Papercusp/chat-protocol-go/internal/turnsink"
)

// benchDeltas is how many text deltas the benchmark body has, beside a
// tool_use block of benchFragments input_json_delta fragments.
const (
	benchDeltas    = 1000
	benchFragments = 100
)

// words are the texts of the deltas, as a model streams them.
var words = []string{"The", " quick", " brown", " fox", " jumps", " over", " the", " lazy", " dog", ".", " Caf\u00e9", " \u2014", " \"quoted\"", "\n"}

// messagesBody is a Messages body: message_start, a text block of
// benchDeltas deltas, a tool_use block of benchFragments fragments,
// message_delta and message_stop, with a ping.
func messagesBody() []byte {
	var b bytes.Buffer
	ev := func(typ, rest string) {
		fmt.Fprintf(&b, "event: %s\ndata: {\"type\":%q%s}\n\n", typ, typ, rest)
	}
	ev("message_start", `,"message":{"model":"claude-sonnet-4-5-20250929","id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":2,"service_tier":"standard"}}`)
	ev("content_block_start", `,"index":0,"content_block":{"type":"text","text":""}`)
	ev("ping", "")
	for i := range benchDeltas {
		q, _ := json.Marshal(words[i%len(words)])
		ev("content_block_delta", `,"index":0,"delta":{"type":"text_delta","text":`+string(q)+`}`)
	}
	ev("content_block_stop", `,"index":0`)
	ev("content_block_start", `,"index":1,"content_block":{"type":"tool_use","id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"get_weather","input":{}}`)
	ev("content_block_delta", `,"index":1,"delta":{"type":"input_json_delta","partial_json":"{\"items\": ["}`)
	for i := range benchFragments {
		sep := ", "
		if i == benchFragments-1 {
			sep = "]}"
		}
		ev("content_block_delta", fmt.Sprintf(`,"index":1,"delta":{"type":"input_json_delta","partial_json":"%d%s"}`, i, sep))
	}
	ev("content_block_stop", `,"index":1`)
	ev("message_delta", `,"delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":1189}`)
	ev("message_stop", "")
	return b.Bytes()
}

// BenchmarkIngest compares, over the same bytes from memory, the SDK's own
// stream decoding and accumulation (anthropic.Message's Accumulate) with
// ingest.Read into a Sink that only counts (sdk vs ingest: the ratio of
// docs/contract.md section 17's reader to the SDK) and into the
// envelope-making turnsink (ingest-envelopes).
func BenchmarkIngest(b *testing.B) {
	ctx := context.Background()
	body := messagesBody()
	const deltas = benchDeltas + benchFragments
	b.Run("messages/sdk", func(b *testing.B) {
		ingestkit.Measure(b, len(body), deltas, func() error {
			res := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: io.NopCloser(bytes.NewReader(body))}
			stream := ssestream.NewStream[anthropic.MessageStreamEventUnion](ssestream.NewDecoder(res), nil)
			var msg anthropic.Message
			for stream.Next() {
				if err := msg.Accumulate(stream.Current()); err != nil {
					return err
				}
			}
			if len(msg.Content) != 2 {
				return errors.New("the accumulation lost the turn")
			}
			return stream.Err()
		})
	})
	b.Run("messages/ingest", func(b *testing.B) {
		ingestkit.Measure(b, len(body), deltas, func() error {
			var c ingestkit.Counter
			err := ingest.Read(ctx, ingest.AnthropicMessages, bytes.NewReader(body), &c, nil)
			if err == nil && c.N != benchDeltas+4 {
				err = fmt.Errorf("%d calls", c.N)
			}
			return err
		})
	})
	b.Run("messages/ingest-envelopes", func(b *testing.B) {
		ingestkit.Measure(b, len(body), deltas, func() error {
			buf := make([]byte, 0, 4096)
			sink := turnsink.New("c-1", "t-1", func(env *chatprotocol.ChatEventEnvelope) error {
				var err error
				buf, err = env.AppendJSON(buf[:0])
				return err
			})
			return ingest.Read(ctx, ingest.AnthropicMessages, bytes.NewReader(body), sink, nil)
		})
	})
}
