package main

import (
	"bytes"
	"errors"
	"io"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/benchcpu"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/teststream"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// benchStream returns a generated legacy stream of about 8 MB.
func benchStream(b *testing.B, text bool) []byte {
	var buf bytes.Buffer
	if err := teststream.Generate(&buf, 8<<20, 1, text); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// upgraded returns the version-1 stream a legacy stream upgrades to, as a
// host serves it: every envelope framed by EnvelopeFrame.
func upgraded(b *testing.B, legacy []byte) []byte {
	var out bytes.Buffer
	enc := sse.NewEncoder(&out)
	opts := streamOptions{from: fromLegacy, dialect: "scout", maxFrame: chatprotocol.DefaultMaxFrameBytes}
	_, err := decodeStream(bytes.NewReader(legacy), opts, streamSink{envelope: func(env *chatprotocol.ChatEventEnvelope) error {
		f, err := chatprotocol.EnvelopeFrame(env)
		if err == nil {
			err = enc.Encode(f)
		}
		return err
	}}, func(frame int64, e *refusal.Error) { b.Fatalf("frame %d: %v", frame, e) })
	if err != nil {
		b.Fatal(err)
	}
	return out.Bytes()
}

// BenchmarkDecodeState measures `chatwire decode --state` on a generated
// legacy stream (MB/s of stream, and MB per CPU second), beside its
// baseline in the same run: the SSE framing alone
// (EnvelopeReader.NextFrame), which every path pays.
func BenchmarkDecodeState(b *testing.B) {
	for _, c := range []struct {
		name     string
		text, v1 bool
	}{{"legacy-text", true, false}, {"legacy-no-text", false, false}, {"v1-text", true, true}} {
		data := benchStream(b, c.text)
		if c.v1 {
			data = upgraded(b, data)
		}
		opts := streamOptions{from: fromAuto, dialect: "scout", maxFrame: chatprotocol.DefaultMaxFrameBytes}
		b.Run(c.name+"/framing-only", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu := benchcpu.Start()
			for b.Loop() {
				r := chatprotocol.NewEnvelopeReader(bytes.NewReader(data), nil)
				for {
					if _, err := r.NextFrame(); errors.Is(err, io.EOF) {
						break
					} else if err != nil {
						b.Fatal(err)
					}
				}
			}
			cpu.Report(b, len(data))
		})
		b.Run(c.name+"/decode-state", func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu := benchcpu.Start()
			for b.Loop() {
				res, err := decodeStream(bytes.NewReader(data), opts, streamSink{}, func(frame int64, e *refusal.Error) {
					b.Fatalf("frame %d: %v", frame, e)
				})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := res.state.MarshalJSON(); err != nil {
					b.Fatal(err)
				}
			}
			cpu.Report(b, len(data))
		})
	}
}
