package chatprotocol

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/benchcpu"
)

// benchDelta is a typical delta envelope as a host streams it.
const benchDelta = `{"schemaVersion":1,"conversationId":"conv-5f3a9c","turnId":"turn-0042","eventId":"evt-000117","seq":117,"event":{"type":"delta","text":"Refunds are accepted within 30 days of delivery."}}`

// benchToolResult returns a tool_result envelope whose output is a JSON
// object of search hits, about 64 KiB in all.
func benchToolResult() []byte {
	var hits []string
	for i := 0; ; i++ {
		hits = append(hits, fmt.Sprintf(`{"id":"doc-%05d","score":0.%04d,"title":"Refund policy section %d","snippet":"Customers may return unused items within thirty days of delivery for a full refund; see \"Returns\" for details.","tags":["policy","refund","v%d"]}`, i, 9999-i, i, i%7))
		if len(strings.Join(hits, ",")) > 64<<10-200 {
			break
		}
	}
	return []byte(`{"schemaVersion":1,"conversationId":"conv-5f3a9c","turnId":"turn-0042","eventId":"evt-000118","seq":118,"event":{"type":"tool_result","callId":"call-7","status":"ok","output":{"hits":[` + strings.Join(hits, ",") + `]}}}`)
}

// plainEnvelope is the baseline: the same envelope as a plain struct that
// encoding/json fills without any check.
type plainEnvelope struct {
	SchemaVersion  int    `json:"schemaVersion"`
	ConversationID string `json:"conversationId"`
	TurnID         string `json:"turnId"`
	EventID        string `json:"eventId"`
	Seq            int64  `json:"seq"`
	At             string `json:"at"`
	Event          struct {
		Type   string          `json:"type"`
		Text   string          `json:"text"`
		CallID string          `json:"callId"`
		Status string          `json:"status"`
		Output json.RawMessage `json:"output"`
	} `json:"event"`
}

func BenchmarkParseEnvelope(b *testing.B) {
	inputs := []struct {
		name string
		data []byte
	}{
		{"delta", []byte(benchDelta)},
		{"tool_result_64KiB", benchToolResult()},
	}
	for _, in := range inputs {
		b.Run(in.name+"/strict", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in.data)))
			cpu := benchcpu.Start()
			for b.Loop() {
				if _, err := ParseEnvelope(in.data); err != nil {
					b.Fatal(err)
				}
			}
			cpu.Report(b, len(in.data))
		})
		b.Run(in.name+"/baseline_encoding_json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in.data)))
			cpu := benchcpu.Start()
			for b.Loop() {
				var env plainEnvelope
				if err := json.Unmarshal(in.data, &env); err != nil {
					b.Fatal(err)
				}
			}
			cpu.Report(b, len(in.data))
		})
	}
}

// BenchmarkParseEnvelopeManyMembers reads cards whose object carries n
// members unknown to this version: the time per byte must not grow with n
// (the case-variant check groups names instead of comparing them pairwise).
func BenchmarkParseEnvelopeManyMembers(b *testing.B) {
	for _, n := range []int{1_000, 16_000, 64_000} {
		var members strings.Builder
		for i := range n {
			fmt.Fprintf(&members, `,"k%d":0`, i)
		}
		data := []byte(`{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"card","card":{"prompt":"p","correlationId":"k","createdAt":1` + members.String() + `}}}`)
		b.Run(fmt.Sprintf("card_members_%d", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := ParseEnvelope(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
