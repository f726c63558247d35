package chatprotocol

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// conformanceFrames returns every frame of the conformance fixtures and
// golden streams, the seeds of the fuzz targets.
func conformanceFrames(tb testing.TB) [][]byte {
	tb.Helper()
	var frames [][]byte
	fixtures, _ := filepath.Glob("testdata/fixtures/*/*.json")
	for _, p := range fixtures {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		var f struct {
			Frame       *string  `json:"frame"`
			FrameBase64 *string  `json:"frameBase64"`
			Frames      []string `json:"frames"`
		}
		if err := json.Unmarshal(data, &f); err != nil {
			tb.Fatal(p, err)
		}
		switch {
		case f.Frame != nil:
			frames = append(frames, []byte(*f.Frame))
		case f.FrameBase64 != nil:
			b, err := base64.StdEncoding.DecodeString(*f.FrameBase64)
			if err != nil {
				tb.Fatal(p, err)
			}
			frames = append(frames, b)
		}
		for _, fr := range f.Frames {
			frames = append(frames, []byte(fr))
		}
	}
	streams, _ := filepath.Glob("testdata/golden/*.jsonl")
	for _, p := range streams {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		frames = append(frames, bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))...)
	}
	return frames
}

// FuzzParseEnvelope checks that ParseEnvelope never panics, that what it
// accepts is strict JSON whose members a plain decoder reads the same, and
// that its canonical form is a fixed point: it parses back to an envelope
// that marshals to the same bytes.
func FuzzParseEnvelope(f *testing.F) {
	for _, fr := range conformanceFrames(f) {
		f.Add(fr)
	}
	reg, err := NewRegistry(map[string]Channel{"products": ChannelEvent})
	if err != nil {
		f.Fatal(err)
	}
	p := NewEnvelopeParser(&ParserOptions{Registry: reg})
	f.Fuzz(func(t *testing.T, data []byte) {
		env, err := p.Parse(data)
		if err != nil {
			if _, ok := errorsAsError(err); !ok {
				t.Fatalf("refusal %v is not an *Error", err)
			}
			return
		}
		if !jsontext.Value(data).IsValid() {
			t.Fatalf("accepted a frame that is not strict JSON: %q", data)
		}
		// The members are read one by one: a kept member may hold a number
		// beyond float64 (1e700), which is strict JSON all the same.
		var plain map[string]jsontext.Value
		if err := json.Unmarshal(data, &plain); err != nil {
			t.Fatalf("accepted %q that a plain decoder refuses: %v", data, err)
		}
		var conv, turn, id string
		var seq float64
		for _, m := range []struct {
			name string
			dst  any
		}{{"conversationId", &conv}, {"turnId", &turn}, {"eventId", &id}, {"seq", &seq}} {
			if err := json.Unmarshal(plain[m.name], m.dst); err != nil {
				t.Fatalf("accepted %q whose %s a plain decoder refuses: %v", data, m.name, err)
			}
		}
		if conv != env.ConversationID || turn != env.TurnID || id != env.EventID || seq != float64(env.Seq) {
			t.Fatalf("reference reads %q %q %q %v, parser %+v", conv, turn, id, seq, env)
		}
		for name := range plain {
			if name != "schemaVersion" && isCaseVariant([]byte(name), envelopeNames) {
				t.Fatalf("accepted case variant %q", name)
			}
		}
		first, err := env.MarshalJSON()
		if err != nil {
			t.Fatalf("accepted %q but cannot marshal it: %v", data, err)
		}
		if bytes.ContainsAny(first, "\n\r") {
			t.Fatalf("canonical form is not one line: %q", first)
		}
		again, err := p.Parse(first)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", first, data, err)
		}
		second, err := again.MarshalJSON()
		if err != nil || !bytes.Equal(first, second) {
			t.Fatalf("canonical form is not a fixed point:\n%q\n%q (%v)", first, second, err)
		}
		if !strings.HasPrefix(string(first), `{"schemaVersion":1,`) {
			t.Fatalf("canonical form lacks its version: %q", first)
		}
	})
}
