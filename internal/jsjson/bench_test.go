package jsjson

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// benchInputs are a typical <ask> body and a 64 KiB <report> body.
func benchInputs() map[string][]byte {
	ask := `{"question":"Which account should the fleet route through?","options":[{"id":"default","label":"Default system account"},{"id":"auto","label":"Gateway auto-routing","description":"fails over across the pool"}],"refs":["WI-5235","owner-inbox-single-pane-2026-07-17#P-003"]}`
	var b strings.Builder
	b.WriteString(`{"title":"Fleet status","plans":[`)
	for i := 0; b.Len() < 64<<10; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"slug":"plan-%d","title":"Plan %d — ümlaut","status":"active","items":[{"id":"P-%d","text":"Provider-aware error classifier","status":"done","ref":"plan:x#P-%d"},{"id":"Q-%d","text":"Per-call pacing","status":"wip"}]}`, i, i, i, i, i)
	}
	b.WriteString(`]}`)
	return map[string][]byte{"ask-300B": []byte(ask), "report-64KiB": []byte(b.String())}
}

// BenchmarkParse compares Parse with encoding/json and go-json-experiment
// decoding the same bytes into an interface value (the two baselines are
// not JSON.parse-faithful; see the package documentation).
func BenchmarkParse(b *testing.B) {
	for name, in := range benchInputs() {
		b.Run(name+"/jsjson", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, ok := Parse(in); !ok {
					b.Fatal("parse failed")
				}
			}
		})
		b.Run(name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				var v any
				if err := json.Unmarshal(in, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/json-v2", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				var v any
				if err := jsonv2.Unmarshal(in, &v, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkParseDeep reads a million nested arrays (2 MB), then the same
// opening brackets without their closing ones: the parser's stack grows by
// chunks that never move, so B/op stays near one 64-byte frame per level
// (plus the value built for closed text) instead of five.
func BenchmarkParseDeep(b *testing.B) {
	const depth = 1_000_000
	for name, in := range map[string]string{
		"closed":   strings.Repeat("[", depth) + strings.Repeat("]", depth),
		"unclosed": strings.Repeat("[", depth),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				ParseString(in)
			}
		})
	}
}
