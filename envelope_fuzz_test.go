package chatprotocol

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"

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
		if err := env.Validate(); err != nil {
			t.Fatalf("accepted %q but Validate refuses it: %v", data, err)
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

// FuzzValidate builds envelopes from fuzzed parts, as a caller builds them
// by hand, and checks that Validate and the digest form ChatStateV1.Apply
// hashes refuse exactly what AppendJSON refuses, with the same code and
// path: the three run one walk, in check mode, in digest mode and in
// writing mode.
func FuzzValidate(f *testing.F) {
	f.Add("c", "hello", []byte(`{"a":1}`), "x", []byte(`1`), uint8(0))
	f.Add("c", "\xff", []byte(`{"a":1,"a":2}`), "Seq", []byte(`2`), uint8(9))
	f.Add("", "t", []byte(`[1,`), "type", []byte(`nope`), uint8(3))
	f.Add("c", "app", []byte(`{"type":"app"}`), "\xfe", []byte(` {"x" : [1, 2]} `), uint8(11))
	f.Add("c", "p", []byte("\"\xed\xa0\x80\""), "ref", []byte(`"\ud800"`), uint8(4))
	f.Fuzz(func(t *testing.T, id, text string, raw []byte, name string, value []byte, kind uint8) {
		env := fuzzedEnvelope(id, text, raw, name, value, kind)
		out, aerr := env.AppendJSON(nil)
		if aerr == nil {
			if _, err := ParseEnvelope(out); err != nil && refusal.CodeOf(err) != refusal.CodeUnsupportedEvent {
				t.Fatalf("written %q does not parse back: %v", out, err)
			}
		}
		sameRefusal(t, "Validate", aerr, env.Validate())
		_, derr := env.appendForm(nil, true)
		sameRefusal(t, "the digest form", aerr, derr)
	})
}

// fuzzedEnvelope builds an envelope from fuzzed parts, as a caller builds
// one by hand: kind picks the event (its low 3 bits) and whether the
// envelope keeps an unknown member (bit 3).
func fuzzedEnvelope(id, text string, raw []byte, name string, value []byte, kind uint8) ChatEventEnvelope {
	env := ChatEventEnvelope{ConversationID: id, TurnID: "t", EventID: "e", Seq: 1}
	kept := []Member{{Name: name, Value: value}}
	switch kind % 8 {
	case 0:
		env.Event = &DeltaEvent{Text: text, Unknown: kept}
	case 1:
		env.Event = &ToolCallEvent{CallID: id, Name: text, Input: raw}
	case 2:
		env.Event = &StateEvent{Version: 1, Snapshot: raw, Unknown: kept}
	case 3:
		env.Event = &AppEvent{Type: text, Raw: raw}
	case 4:
		env.Event = &ResultEvent{Blocks: []ResultBlock{{Kind: ResultBlockText, Text: text, Sources: []Source{{Ref: id, Unknown: kept}}}}}
	case 5:
		env.Event = &CardEvent{Card: cards.OpenCardSnapshot{CorrelationID: id, CreatedAt: 1, CardSpec: cards.CardSpec{Prompt: text}}}
	case 6:
		env.Event = &ToolResultEvent{CallID: id, Status: ToolResultStatus(text), Output: raw}
	case 7:
		env.Event = &CapabilitiesEvent{Capabilities: ChatCapabilities{Unknown: kept}}
	}
	if kind&8 != 0 {
		env.Unknown = kept
	}
	return env
}

// sameRefusal fails t unless got, the error of what, is AppendJSON's
// error want: both nil, or refusals of the same code at the same path.
func sameRefusal(t *testing.T, what string, want, got error) {
	t.Helper()
	if (want == nil) != (got == nil) {
		t.Fatalf("AppendJSON: %v, %s: %v", want, what, got)
	}
	if want == nil {
		return
	}
	a, g := want.(*refusal.Error), got.(*refusal.Error)
	if a.Code != g.Code || a.Path != g.Path {
		t.Fatalf("AppendJSON refuses %s at %q, %s %s at %q", a.Code, a.Path, what, g.Code, g.Path)
	}
}
