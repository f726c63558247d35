package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// frameSource is what the reader stage reads frames from: an SSE stream
// (chatprotocol.EnvelopeReader) or JSON lines (lineReader).
type frameSource interface {
	// NextFrame returns the next frame that carries data, io.EOF at the
	// end, a refusal of the frame (the source goes on after it) or the
	// input's error.
	NextFrame() (sse.Event, error)
	// FrameNumber numbers the frame NextFrame last returned or refused,
	// from 1: the stream's SSE frames, or its lines.
	FrameNumber() int64
	// Truncated reports, after io.EOF, whether the input ended inside a
	// frame.
	Truncated() bool
	// ParseFrame parses a frame NextFrame returned as a version-1 envelope.
	ParseFrame(ev sse.Event) (chatprotocol.ChatEventEnvelope, error)
}

// bom is the UTF-8 byte order mark, which a JSON lines file may begin with.
var bom = []byte("\xef\xbb\xbf")

// jsonLines reports whether in holds JSON lines rather than an SSE stream:
// its first byte other than a space, tab, CR or LF (after a byte order
// mark, which it then drops) is '{', which no SSE line begins with. It
// reads nothing else; a stream of blank lines alone is SSE.
func jsonLines(in *bufio.Reader) bool {
	start := 0
	if b, _ := in.Peek(len(bom)); bytes.Equal(b, bom) {
		start = len(bom)
	}
	for n := start + 1; n <= in.Size(); n++ {
		b, _ := in.Peek(n)
		if len(b) < n {
			return false // the end, or an error the reading returns again
		}
		switch c := b[n-1]; c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			in.Discard(start) // buffered: cannot fail
			return true
		}
		return false
	}
	return false
}

// lineReader reads JSON lines (what chatwire ingest and decode print): each
// line that is not blank is the data of one frame, without its line end (LF
// or CRLF; a last line may lack it). A line whose data is longer than
// maxFrame bytes is refused with frame-too-large and skipped, having held at
// most maxFrame+2 bytes of it.
type lineReader struct {
	in       *bufio.Reader
	parser   *chatprotocol.EnvelopeParser
	maxFrame int
	line     int64
	buf      []byte
	err      error // io.EOF once the input ended, or its error
}

func newLineReader(in *bufio.Reader, maxFrame int) *lineReader {
	return &lineReader{in: in, maxFrame: maxFrame,
		parser: chatprotocol.NewEnvelopeParser(&chatprotocol.ParserOptions{MaxFrameBytes: maxFrame})}
}

func (l *lineReader) NextFrame() (sse.Event, error) {
	for l.err == nil {
		l.line++
		data, tooLong := l.readLine()
		switch {
		case tooLong:
			return sse.Event{}, refusal.New(refusal.CodeFrameTooLarge, "", fmt.Sprintf("line %d is longer than %d bytes", l.line, l.maxFrame))
		case len(bytes.TrimSpace(data)) > 0:
			return sse.Event{Type: sse.EventMessage, Data: data, Frame: l.line}, nil
		}
	}
	return sse.Event{}, l.err
}

// readLine reads the next line and returns it without its line end, or
// reports that it was too long, having read past it.
func (l *lineReader) readLine() (data []byte, tooLong bool) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.in.ReadSlice('\n')
		switch {
		case tooLong:
		case len(l.buf)+len(chunk) > l.maxFrame+2: // the data and a CRLF
			tooLong, l.buf = true, l.buf[:0]
		default:
			l.buf = append(l.buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			l.err = err
		}
		break
	}
	data = bytes.TrimSuffix(l.buf, []byte("\n"))
	data = bytes.TrimSuffix(data, []byte("\r"))
	return data, tooLong || len(data) > l.maxFrame
}

func (l *lineReader) FrameNumber() int64 { return l.line }

// Truncated is false: a last line without its line end is read whole, and
// one cut inside its JSON is refused by the parser.
func (l *lineReader) Truncated() bool { return false }

func (l *lineReader) ParseFrame(ev sse.Event) (chatprotocol.ChatEventEnvelope, error) {
	return l.parser.Parse(ev.Data)
}
