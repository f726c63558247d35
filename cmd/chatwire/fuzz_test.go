package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// FuzzDecode runs the decode and blocks code path on any bytes, with every
// --from, with and without --keep-going: it must never panic nor fail for
// another reason than a violation, report each violation with a code of the
// contract on one line, stop at the first one without --keep-going, and
// print only lines of valid JSON: envelopes that parse back, product
// frames, the state and the blocks. The seeds are the captured streams and
// their damaged forms (testdata/fuzz/FuzzDecode holds more).
func FuzzDecode(f *testing.F) {
	for _, data := range capturedStreams(f) {
		f.Add(data, uint8(0), false)
		f.Add(data[:len(data)*2/3], uint8(0), true)
		f.Add(bytes.ReplaceAll(data, []byte("\n"), []byte("\r")), uint8(1), true)
	}
	f.Add([]byte(v1(1, delta("a"))+"data: {\"type\":\"token\",\"content\":\"x\"}\n\n"+v1(2, delta("b"))), uint8(0), true)
	f.Add([]byte("data: \xff\xfe\x00garbage\n\n\x00\x01"), uint8(2), true)
	codes := refusal.Codes()
	f.Fuzz(func(t *testing.T, data []byte, from uint8, keepGoing bool) {
		o := fuzzOptions(from, keepGoing)
		var out bytes.Buffer
		sink := streamSink{
			envelope: func(env *chatprotocol.ChatEventEnvelope) error {
				js, err := env.MarshalJSON()
				if err != nil {
					t.Fatalf("an applied envelope does not marshal: %v", err)
				}
				if _, err := chatprotocol.ParseEnvelope(js); err != nil {
					t.Fatalf("%s does not parse back: %v", js, err)
				}
				out.Write(append(js, '\n'))
				return nil
			},
			appEvent: func(raw []byte) error {
				out.WriteString(`{"appEvent":` + string(raw) + "}\n")
				return nil
			},
		}
		violations := 0
		res, err := decodeStream(bytes.NewReader(data), o, sink, func(frame int64, e *refusal.Error) {
			violations++
			if !slices.Contains(codes, e.Code) {
				t.Fatalf("code %q is not a code of the module", e.Code)
			}
			if frame < 1 {
				t.Fatalf("frame %d", frame)
			}
			if line := violationLine(frame, e); strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
				t.Fatalf("violation line %q", line)
			}
		})
		if err != nil {
			t.Fatalf("decodeStream: %v", err)
		}
		if !keepGoing && violations > 1 {
			t.Fatalf("%d violations without --keep-going", violations)
		}
		state, err := res.state.MarshalJSON()
		if err != nil {
			t.Fatalf("state: %v", err)
		}
		out.Write(append(state, '\n'))
		if err := writeBlocks(&out, res.state); err != nil {
			t.Fatalf("blocks: %v", err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			if !json.Valid([]byte(line)) {
				t.Fatalf("output line is not JSON: %q", line)
			}
		}
	})
}

// fuzzOptions are the stream options a fuzz target's mode byte picks: the
// --from (mode modulo 3) and the dialect (mode/3 modulo 2), frames of at
// most 4 KiB.
func fuzzOptions(mode uint8, keepGoing bool) streamOptions {
	return streamOptions{
		from:      []string{fromAuto, fromLegacy, fromV1}[int(mode)%3],
		dialect:   []string{"scout", "papercusp"}[int(mode/3)%2],
		maxFrame:  4096,
		keepGoing: keepGoing,
	}
}
