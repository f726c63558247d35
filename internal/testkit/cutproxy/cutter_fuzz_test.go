package cutproxy

import (
	"bytes"
	"testing"
)

// FuzzCutterChunking checks the cut point finder on any bytes: split into
// chunks anywhere, it finds the same point as in one chunk, and the point
// is what the Cut asks for (the end of the k-th id line at a line start, or
// the n-th byte, or the byte after it when the n-th ends an id line and the
// cut spares id line ends).
func FuzzCutterChunking(f *testing.F) {
	f.Add([]byte(stream), uint16(2), uint16(0), uint16(40), uint16(3), false)
	f.Add([]byte(stream), uint16(0), uint16(70), uint16(1), uint16(1), false)
	f.Add([]byte("id:\nid:\n\nid: 3\n"), uint16(3), uint16(0), uint16(4), uint16(2), false)
	f.Add([]byte("xid: 1\n\r\nid:1\r\n"), uint16(1), uint16(9), uint16(2), uint16(5), false)
	f.Add([]byte("data: x\nid: 12\n\ndata: y\nid: 13\n\n"), uint16(0), uint16(15), uint16(7), uint16(1), true)
	f.Add([]byte("\nid: 1\nid: 2\n\n"), uint16(0), uint16(7), uint16(3), uint16(2), true)
	f.Fuzz(func(t *testing.T, data []byte, idLine, nbytes, split, step uint16, spare bool) {
		cut := Cut{IDLine: int(idLine % 64), Bytes: int64(nbytes), SpareIDLineEnd: spare}
		whole, wholeKind := runCutter(cut, [][]byte{data})
		if step == 0 {
			step = 1
		}
		var chunks [][]byte
		rest := data
		if s := int(split) % (len(data) + 1); s > 0 {
			chunks, rest = append(chunks, rest[:s]), rest[s:]
		}
		for len(rest) > 0 {
			n := min(int(step), len(rest))
			chunks, rest = append(chunks, rest[:n]), rest[n:]
		}
		got, gotKind := runCutter(cut, chunks)
		if !bytes.Equal(got, whole) || gotKind != wholeKind {
			t.Fatalf("chunked: %q (%d), whole: %q (%d)", got, gotKind, whole, wholeKind)
		}
		ids := bytes.Count(append([]byte{'\n'}, whole...), idLineStart)
		switch wholeKind {
		case cutNone:
			if !bytes.Equal(whole, data) {
				t.Fatalf("uncut but forwarded %q of %q", whole, data)
			}
			spared := spare && int64(len(data)) == cut.Bytes && endsIDLine(data) // moved past the end
			if cut.Bytes > 0 && int64(len(data)) >= cut.Bytes && !spared {
				t.Fatalf("not cut after %d of %d bytes", cut.Bytes, len(data))
			}
		case cutIDLine:
			if ids != cut.IDLine || whole[len(whole)-1] != '\n' {
				t.Fatalf("cut at id line %d: %q", cut.IDLine, whole)
			}
		case cutBytes:
			if int64(len(whole)) != cut.Bytes || (cut.IDLine > 0 && ids > cut.IDLine) {
				t.Fatalf("cut after %d bytes: %q", cut.Bytes, whole)
			}
			if spare && endsIDLine(whole) {
				t.Fatalf("cut right after an id line that was to be spared: %q", whole)
			}
		case cutBytesSpared:
			if !spare || int64(len(whole)) != cut.Bytes+1 || endsIDLine(whole) || !endsIDLine(whole[:cut.Bytes]) {
				t.Fatalf("spared cut after %d bytes (spare %v): %q", cut.Bytes, spare, whole)
			}
		}
	})
}

// runCutter feeds chunks to a new cutter and returns what it forwards and
// whether it cut.
func runCutter(cut Cut, chunks [][]byte) ([]byte, cutKind) {
	c := newCutter(cut, nil)
	var out []byte
	for _, b := range chunks {
		n, k := c.scan(b)
		out = append(out, b[:n]...)
		if k != cutNone {
			return out, k
		}
	}
	return out, cutNone
}

// endsIDLine reports whether b ends with the line end of an id line that
// starts a line (b is counted from a line start).
func endsIDLine(b []byte) bool {
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return false
	}
	line := append([]byte{'\n'}, b[:len(b)-1]...)
	start := bytes.LastIndexByte(line, '\n')
	return bytes.HasPrefix(line[start:], idLineStart)
}
