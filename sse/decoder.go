package sse

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/decimal"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// DefaultMaxFrameBytes is the frame size bound of a Decoder whose options
// give none: 1 MiB, the envelope size limit of docs/contract.md section 5.
const DefaultMaxFrameBytes = 1 << 20

// DecoderOptions configures a Decoder. A nil *DecoderOptions means the
// defaults.
type DecoderOptions struct {
	// MaxFrameBytes bounds the size of one frame, in bytes of the stream:
	// the frame's lines, each counted with one byte for its line end (CR,
	// LF or CRLF alike), not counting the blank line that ends it, so
	// "data: x\n\n" is 8 bytes. It bounds every line too, since a line belongs to a
	// frame. 0 or negative means [DefaultMaxFrameBytes] (1 MiB). There is no
	// way to turn the bound off: the decoder's memory is what it bounds.
	MaxFrameBytes int
	// LastEventID is the last event id the stream starts with: the value a
	// client sent as Last-Event-ID when it reconnected, so events without
	// an id line report it (WHATWG HTML, "event stream interpretation").
	// "" means none. A value holding CR, LF or NUL is ignored, as a reader
	// ignores such an id line, so it is never echoed back in a header.
	LastEventID string
}

// Event is one frame read by a Decoder: either an event (a frame with at
// least one data line, which a browser would dispatch), or a frame of
// comment lines only (Comment is true).
type Event struct {
	// Type is the value of the frame's last event line, or "message"
	// ([EventMessage]) when it has none or an empty one; "" for a comment.
	Type string
	// Data is the frame's data lines joined with LF, without a final LF;
	// nil for a comment. It stays valid only until the next call to the
	// Decoder's Next, which reuses its memory; Clone copies it.
	Data []byte
	// LastEventID is the stream's last event id once this frame is read:
	// the value of the last id line of this or an earlier frame (or
	// [DecoderOptions.LastEventID]), or "" when there was none or the last
	// was empty. An id line containing NUL is ignored.
	LastEventID string
	// Comment reports a frame made only of comment lines (lines starting
	// with ':'), such as ": connected". A frame with fields but no data
	// line is not returned at all.
	Comment bool
	// Frame is the 1-based number of this frame in the stream, counting
	// every frame, including those Next does not return (fields without
	// data) and those it refuses. Offset is the byte offset in the stream
	// of the frame's first byte, counting a leading BOM.
	Frame  int64
	Offset int64
}

// Clone returns a copy of e whose Data does not share the Decoder's memory.
func (e Event) Clone() Event {
	e.Data = bytes.Clone(e.Data)
	return e
}

// The read buffer starts at initialBuffer bytes and each read asks for at
// least minRead bytes. The buffer grows only to hold one partial line,
// which the frame bound limits.
const (
	initialBuffer = 16 << 10
	minRead       = 4 << 10
)

// The event type cache holds up to maxTypes names of up to maxTypeLen
// bytes, so that a stream with a few event types does not allocate a
// string per event, and a stream with endless new names cannot grow it.
const (
	maxTypes   = 64
	maxTypeLen = 64
)

// Ids of up to maxBlockID bytes are carved out of blocks of idBlock bytes.
const (
	idBlock    = 4 << 10
	maxBlockID = 128
)

// maxRetryMs is the largest retry value, in milliseconds, that a
// time.Duration holds.
const maxRetryMs = math.MaxInt64 / int64(time.Millisecond)

// bom is the UTF-8 byte order mark.
const bom = "\xEF\xBB\xBF"

// errTooLarge tells Next that the current frame went beyond the bound.
var errTooLarge = errors.New("frame too large")

// Decoder reads frames from an event stream, following the event-stream
// interpretation of the WHATWG HTML standard (docs/contract.md section 10):
// one leading UTF-8 BOM is skipped; lines end with CR, LF or CRLF, a CRLF
// split across two reads included; lines starting with ':' are comments; a
// line without ':' is a field with an empty value; one space after the
// colon is dropped; data lines are joined with LF; an id containing NUL is
// ignored; a retry value is used only when it is all ASCII digits; the last
// event id carries over to later events; unknown fields are ignored; and a
// frame not ended by a blank line when the stream ends is dropped. The
// stream is always read as bytes: no encoding is assumed or checked.
//
// Frame size is bounded ([DecoderOptions.MaxFrameBytes]): whatever the
// stream, the decoder's memory stays within a small multiple of the bound
// (the read buffer at most about twice it, one frame's data at most once)
// plus a constant.
//
// A Decoder reads from its [io.Reader] in whatever chunks the reader gives,
// only when it has no complete line buffered, so an event is returned as
// soon as its blank line has arrived. It is not safe for concurrent use.
// The zero Decoder is not usable: make one with [NewDecoder].
type Decoder struct {
	rd  io.Reader
	max int

	// The read buffer: bytes buf[r:w] are unread; buf[0] is at stream
	// offset base.
	buf  []byte
	r, w int
	base int64
	rerr error // the reader's error, returned once the buffer is used up
	err  error // the error Next returns from now on

	started   bool       // the leading BOM has been looked for
	skipLF    bool       // the last line ended with CR: an LF next is its end
	lf, cr    byteSearch // where the next LF and CR are
	lineStart int64      // stream offset of the line readLine returned
	midLine   bool       // skipping discarded the start of the line being read
	lineCont  bool       // the line readLine returned continues discarded bytes

	// The frame being read.
	inFrame      bool
	skipping     bool // discarding the rest of a refused frame
	frameBytes   int
	frames       int64
	frameStart   int64
	onlyComments bool
	hasData      bool
	data         []byte
	typ          []byte
	id           []byte
	idSet        bool
	retry        time.Duration
	retrySet     bool

	// The stream's state.
	lastID    string
	reconnect time.Duration
	hasRetry  bool
	truncated bool
	types     map[string]string
	ids       strings.Builder // the current block of id strings
}

// NewDecoder returns a Decoder reading from r with opts (nil means the
// defaults). It reads nothing until the first call to Next.
func NewDecoder(r io.Reader, opts *DecoderOptions) *Decoder {
	d := &Decoder{rd: r, max: DefaultMaxFrameBytes, lf: byteSearch{c: '\n', at: -1}, cr: byteSearch{c: '\r', at: -1}}
	if opts != nil {
		if opts.MaxFrameBytes > 0 {
			d.max = opts.MaxFrameBytes
		}
		if validField(opts.LastEventID) {
			d.lastID = opts.LastEventID
		}
	}
	return d
}

// Next reads the next event or comment-only frame. Frames with fields but
// no data line (an id or retry alone) are read and take effect but are not
// returned.
//
// At the end of the stream Next returns [io.EOF] (dropping an unfinished frame;
// see Truncated). A frame longer than MaxFrameBytes is refused with an
// [*refusal.Error] of code frame-too-large ([refusal.ErrFrameTooLarge]) as soon
// as its size is known to be too large, before it is read whole; that frame has
// no effect at all, and calling Next again skips the rest of it and goes on
// with the next frame. Any other error comes from the reader: its own error,
// returned as it is once the frames before it have been returned,
// [io.ErrNoProgress] after 100 reads in a row that gave nothing, or an error
// for a reader that reported an impossible byte count. Next then keeps
// returning that error, as it keeps returning [io.EOF] after the end.
//
// The returned Data is valid until the next call to Next.
func (d *Decoder) Next() (Event, error) {
	if d.err != nil {
		return Event{}, d.err
	}
	d.data = d.data[:0]
	for {
		line, err := d.readLine()
		if err == errTooLarge {
			return Event{}, d.refuse()
		}
		if err != nil {
			return Event{}, d.end(err)
		}
		if d.skipping {
			if len(line) == 0 && !d.lineCont {
				d.skipping = false
			}
			continue
		}
		if len(line) == 0 {
			if !d.inFrame {
				continue
			}
			if ev, ok := d.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if !d.inFrame {
			d.inFrame = true
			d.frames++
			d.frameStart = d.lineStart
			d.onlyComments = true
		}
		d.frameBytes += len(line) + 1
		if d.frameBytes > d.max {
			return Event{}, d.refuse()
		}
		d.field(line)
	}
}

// field applies one non-blank line of the current frame.
func (d *Decoder) field(line []byte) {
	if line[0] == ':' {
		return
	}
	d.onlyComments = false
	name, value := line, line[len(line):]
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		d.data = append(d.data, value...)
		d.data = append(d.data, '\n')
		d.hasData = true
	case "event":
		d.typ = append(d.typ[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			d.id = append(d.id[:0], value...)
			d.idSet = true
		}
	case "retry":
		if ms, ok := parseRetry(value); ok {
			d.retry = time.Duration(ms) * time.Millisecond
			d.retrySet = true
		}
	}
}

// parseRetry reads a retry value: ASCII digits only, at most maxRetryMs.
func parseRetry(v []byte) (int64, bool) { return decimal.Parse(v, maxRetryMs) }

// dispatch ends the current frame at its blank line. It returns the frame
// when it is an event or a comment-only frame.
func (d *Decoder) dispatch() (Event, bool) {
	d.commitFrame()
	typ := d.typ
	d.typ = d.typ[:0]
	ev := Event{LastEventID: d.lastID, Frame: d.frames, Offset: d.frameStart}
	switch {
	case d.hasData:
		d.hasData = false
		ev.Type = d.typeName(typ)
		ev.Data = d.data[:len(d.data)-1]
		return ev, true
	case d.onlyComments:
		ev.Comment = true
		return ev, true
	}
	return Event{}, false
}

// commitFrame applies the frame's id and retry to the stream state.
func (d *Decoder) commitFrame() {
	d.inFrame = false
	d.frameBytes = 0
	if d.idSet {
		if string(d.id) != d.lastID {
			d.lastID = d.idString(d.id)
		}
		d.idSet = false
	}
	if d.retrySet {
		d.reconnect, d.hasRetry = d.retry, true
		d.retrySet = false
	}
}

// dropFrame forgets the frame being read.
func (d *Decoder) dropFrame() {
	d.inFrame = false
	d.frameBytes = 0
	d.hasData = false
	d.data = d.data[:0]
	d.typ = d.typ[:0]
	d.idSet = false
	d.retrySet = false
}

// typeName returns b as a string, from the cache when it can.
func (d *Decoder) typeName(b []byte) string {
	if len(b) == 0 {
		return EventMessage
	}
	if s, ok := d.types[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(b) <= maxTypeLen && len(d.types) < maxTypes {
		if d.types == nil {
			d.types = make(map[string]string)
		}
		d.types[s] = s
	}
	return s
}

// idString returns b as a string. A short id is carved out of a shared
// block of idBlock bytes, so that ids cost one allocation per block rather
// than one per event; the strings stay valid, since a strings.Builder never
// changes bytes it has handed out, and a block lives as long as one of its
// ids does.
func (d *Decoder) idString(b []byte) string {
	if len(b) > maxBlockID {
		return string(b)
	}
	if d.ids.Cap()-d.ids.Len() < len(b) {
		d.ids.Reset()
		d.ids.Grow(idBlock)
	}
	start := d.ids.Len()
	d.ids.Write(b)
	return d.ids.String()[start:]
}

// refuse reports the current frame as too large and starts skipping it.
func (d *Decoder) refuse() error {
	if !d.inFrame {
		// The first line of the frame is the partial line in the buffer.
		d.frames++
		d.frameStart = d.base + int64(d.r)
	}
	d.dropFrame()
	d.skipping = true
	return refusal.New(refusal.CodeFrameTooLarge, "", fmt.Sprintf(
		"SSE frame %d at byte %d is longer than %d bytes", d.frames, d.frameStart, d.max))
}

// end records the end of the stream or a read error.
func (d *Decoder) end(err error) error {
	if err == io.EOF {
		if !d.skipping && (d.inFrame || d.r < d.w || d.midLine) {
			d.truncated = true
			if !d.inFrame {
				// The dropped frame is a partial first line: count it,
				// so that Frame names it.
				d.frames++
				d.frameStart = d.base + int64(d.r)
			}
		}
		// A retry line takes effect when it is read (WHATWG), even in a
		// frame that the end of the stream cuts.
		if d.retrySet && !d.skipping {
			d.reconnect, d.hasRetry = d.retry, true
		}
	}
	d.dropFrame()
	d.err = err
	return err
}

// readLine returns the next line without its line end, reading as needed.
// The line is valid until the next call. It returns errTooLarge when the
// line being read makes the current frame too large (unless skipping, which
// discards partial lines instead), io.EOF at the end of the stream, or the
// reader's error.
func (d *Decoder) readLine() ([]byte, error) {
	for {
		if !d.started && (d.w-d.r >= len(bom) || d.rerr != nil) {
			if bytes.HasPrefix(d.buf[d.r:d.w], []byte(bom)) {
				d.r += len(bom)
			}
			d.started = true
		}
		if d.started && d.skipLF && d.r < d.w {
			if d.buf[d.r] == '\n' {
				d.r++
			}
			d.skipLF = false
		}
		if d.started && !d.skipLF {
			if i := d.findLineEnd(); i >= 0 {
				line := d.buf[d.r:i]
				d.lineStart = d.base + int64(d.r)
				d.lineCont, d.midLine = d.midLine, false
				d.skipLF = d.buf[i] == '\r'
				d.r = i + 1
				return line, nil
			}
			if partial := d.w - d.r; d.skipping {
				if partial > 0 {
					d.r = d.w
					d.midLine = true
				}
			} else if d.frameBytes+partial > d.max {
				return nil, errTooLarge
			}
		}
		if d.rerr != nil {
			return nil, d.rerr
		}
		d.fill()
	}
}

// findLineEnd returns the index of the first CR or LF in buf[r:w], or -1.
func (d *Decoder) findLineEnd() int {
	lf := d.lf.next(d.buf, d.r, d.w)
	cr := d.cr.next(d.buf, d.r, d.w)
	switch {
	case lf < 0:
		return cr
	case cr < 0:
		return lf
	}
	return min(lf, cr)
}

// byteSearch finds one byte value in the read buffer, remembering what it
// found and where it looked, so that each byte is searched at most once
// for each value: without it, a stream of short CR-ended lines would have
// every line's LF search run to the end of the buffer. at is the index of
// the first c at or after the read position when at >= that position;
// otherwise none is known, and there is none before scanned.
type byteSearch struct {
	c           byte
	at, scanned int
}

// next returns the index of the first c in buf[r:w], or -1.
func (s *byteSearch) next(buf []byte, r, w int) int {
	if s.at >= r {
		return s.at
	}
	from := max(r, s.scanned)
	if j := bytes.IndexByte(buf[from:w], s.c); j >= 0 {
		s.at = from + j
		return s.at
	}
	s.at, s.scanned = -1, w
	return -1
}

// shift follows the buffer's bytes moving n places to the front, the read
// position with them.
func (s *byteSearch) shift(n int) {
	if s.at < n {
		s.at = -1
	} else {
		s.at -= n
	}
	s.scanned = max(s.scanned-n, 0)
}

// fill reads once more into the buffer, making room first. It records the
// reader's error, or io.ErrNoProgress after 100 empty reads in a row.
func (d *Decoder) fill() {
	if d.r == d.w && d.r > 0 {
		d.shift()
	}
	if len(d.buf)-d.w < minRead {
		if d.r > 0 {
			d.shift()
		}
		if len(d.buf)-d.w < minRead {
			grown := make([]byte, max(initialBuffer, 2*len(d.buf), d.w+minRead))
			copy(grown, d.buf[:d.w])
			d.buf = grown
		}
	}
	for range 100 {
		n, err := d.rd.Read(d.buf[d.w:])
		if n < 0 || n > len(d.buf)-d.w {
			d.rerr = fmt.Errorf("sse: the reader returned an impossible count %d", n)
			return
		}
		d.w += n
		if err != nil {
			d.rerr = err
			return
		}
		if n > 0 {
			return
		}
	}
	d.rerr = io.ErrNoProgress
}

// shift moves the unread bytes to the start of the buffer.
func (d *Decoder) shift() {
	s := d.r
	copy(d.buf, d.buf[s:d.w])
	d.w -= s
	d.r = 0
	d.base += int64(s)
	d.lf.shift(s)
	d.cr.shift(s)
}

// LastEventID returns the stream's last event id: the value of the last id
// line of a frame read whole (or [DecoderOptions.LastEventID]). A client that
// reconnects sends it as Last-Event-ID and gives it to the next Decoder.
func (d *Decoder) LastEventID() string { return d.lastID }

// Retry returns the reconnection delay last set by a retry line (in
// milliseconds on the wire), and whether any was set. A value too large for
// a [time.Duration] (about 292 years) is ignored.
func (d *Decoder) Retry() (time.Duration, bool) { return d.reconnect, d.hasRetry }

// Truncated reports whether the stream ended inside a frame (after Next
// returned [io.EOF]): bytes after the last blank line that were dropped, as
// WHATWG requires, rather than returned. A refused frame does not count.
func (d *Decoder) Truncated() bool { return d.truncated }

// Position returns the number and byte offset of the last frame Next began to
// read, returned or refused (0, 0 before the first); once Next has returned
// [io.EOF] with Truncated true, the frame the end of the stream cut. Use it to
// place an error: "frame N".
func (d *Decoder) Position() (number, offset int64) { return d.frames, d.frameStart }
