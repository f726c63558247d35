package chatprotocol_test

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
	"testing/iotest"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// readAll reads every envelope and refusal of an EnvelopeReader, going on
// after refusals until io.EOF or a reader's error; each item is the
// envelope's canonical JSON or the refusal's code and path.
func readAll(t *testing.T, r io.Reader, opts *chatprotocol.ParserOptions) []string {
	er := chatprotocol.NewEnvelopeReader(r, opts)
	codes := refusal.Codes()
	var out []string
	for {
		env, err := er.Next()
		if errors.Is(err, io.EOF) {
			return append(out, "EOF")
		}
		if err != nil {
			e, ok := errors.AsType[*refusal.Error](err)
			if !ok {
				return append(out, "reader error: "+err.Error())
			}
			if !slices.Contains(codes, e.Code) {
				t.Fatalf("refusal without a contract code: %v", err)
			}
			out = append(out, string(e.Code)+" at "+e.Path)
			continue
		}
		b, err := env.MarshalJSON()
		if err != nil {
			t.Fatalf("Next returned an envelope Marshal refuses: %v", err)
		}
		again, err := chatprotocol.ParseEnvelope(b)
		if err != nil {
			t.Fatalf("Next returned an envelope whose canonical form %q does not parse: %v", b, err)
		}
		if b2, _ := again.MarshalJSON(); !bytes.Equal(b, b2) {
			t.Fatalf("canonical form is not a fixed point: %q, %q", b, b2)
		}
		out = append(out, string(b))
	}
}

// FuzzEnvelopeReader reads arbitrary bytes as an SSE stream of envelopes,
// with a small frame limit to reach the refusals: it never panics, every
// refusal carries a contract code, every envelope returned has a canonical
// form that parses back to itself, and reading the stream one byte at a
// time gives exactly what reading it whole gives.
func FuzzEnvelopeReader(f *testing.F) {
	env := `{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":"Hel"}}`
	for _, s := range []string{
		"id: 1\nevent: delta\ndata: " + env + "\n\n",
		"data: " + env + "\n\n",
		": hi\n\nevent: heartbeat\ndata: {\"tsMs\":1}\n\nevent: lifecycle\ndata: " + env + "\n\n",
		"data: " + env[:40] + "\ndata: " + env[40:] + "\n\n",
		"\xef\xbb\xbfdata: " + env + "\r\n\r\n",
		"data: " + env + "\n\ndata: " + env,
		"event: delta\ndata: {\"schemaVersion\":2}\n\ndata: not json\n\ndata: " + env + "\r\r",
		"data: " + env + "\x00\n\n",
	} {
		f.Add([]byte(s), uint16(0))
		f.Add([]byte(s), uint16(100))
	}
	f.Fuzz(func(t *testing.T, in []byte, limit uint16) {
		opts := &chatprotocol.ParserOptions{MaxFrameBytes: int(limit)}
		whole := readAll(t, bytes.NewReader(in), opts)
		bytewise := readAll(t, iotest.OneByteReader(bytes.NewReader(in)), opts)
		if !slices.Equal(whole, bytewise) {
			t.Fatalf("read whole: %q\nread byte by byte: %q", whole, bytewise)
		}
	})
}
