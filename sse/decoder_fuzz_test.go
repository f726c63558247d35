package sse_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/golden"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/sse"
)

// item is one result of a decoder, in a form both the decoder and the
// reference give: an event, a comment-only frame, or a refusal.
type item struct {
	Type, Data, LastEventID string
	Comment, Refused        bool
	Frame, Offset           int64
}

// run is everything a decoding gives.
type run struct {
	Items       []item
	LastEventID string
	Retry       time.Duration
	HasRetry    bool
	Truncated   bool
}

// decodeRun decodes r with the Decoder, going on after refusals.
func decodeRun(t testing.TB, r io.Reader, max int) run {
	d := sse.NewDecoder(r, &sse.DecoderOptions{MaxFrameBytes: max})
	var out run
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			require.ErrorIs(t, err, refusal.ErrFrameTooLarge)
			n, off := d.Position()
			out.Items = append(out.Items, item{Refused: true, Frame: n, Offset: off})
			continue
		}
		out.Items = append(out.Items, item{ev.Type, string(ev.Data), ev.LastEventID, ev.Comment, false, ev.Frame, ev.Offset})
	}
	out.LastEventID = d.LastEventID()
	out.Retry, out.HasRetry = d.Retry()
	out.Truncated = d.Truncated()
	return out
}

// refLine is a line of the reference: its text, its offset, and whether a
// line end closed it.
type refLine struct {
	text   string
	offset int64
	closed bool
}

// referenceRun is the simple reference implementation: it reads the whole
// input, splits it into lines at once, groups them into frames and applies
// the WHATWG rules to each, with the same size rule as the Decoder (each
// line counted with one byte for its line end; a frame over max refused
// with no effect).
func referenceRun(in string, max int) run {
	var off int64
	if strings.HasPrefix(in, "\xEF\xBB\xBF") {
		in, off = in[3:], 3
	}
	var lines []refLine
	for start := 0; start < len(in); {
		end := strings.IndexAny(in[start:], "\r\n")
		if end < 0 {
			lines = append(lines, refLine{in[start:], off + int64(start), false})
			break
		}
		lines = append(lines, refLine{in[start : start+end], off + int64(start), true})
		next := start + end + 1
		if in[start+end] == '\r' && next < len(in) && in[next] == '\n' {
			next++
		}
		start = next
	}

	var out run
	var frame int64
	for i := 0; i < len(lines); {
		if lines[i].text == "" && lines[i].closed {
			i++ // a blank line outside a frame
			continue
		}
		j, size := i, 0
		for j < len(lines) && !(lines[j].text == "" && lines[j].closed) {
			size += len(lines[j].text)
			if lines[j].closed {
				size++
			}
			j++
		}
		frame++
		block, ended := lines[i:j], j < len(lines)
		offset := lines[i].offset
		i = j + 1
		if size > max {
			out.Items = append(out.Items, item{Refused: true, Frame: frame, Offset: offset})
			continue
		}
		var data []string
		typ, id, idSet, comments := "", "", false, true
		for _, l := range block {
			if !l.closed {
				break // the partial last line is never read
			}
			if strings.HasPrefix(l.text, ":") {
				continue
			}
			comments = false
			name, value, found := strings.Cut(l.text, ":")
			if found {
				value = strings.TrimPrefix(value, " ")
			}
			switch name {
			case "data":
				data = append(data, value)
			case "event":
				typ = value
			case "id":
				if !strings.Contains(value, "\x00") {
					id, idSet = value, true
				}
			case "retry":
				if ms, err := strconv.ParseUint(value, 10, 64); err == nil &&
					ms <= uint64(1<<63-1)/uint64(time.Millisecond) {
					out.Retry, out.HasRetry = time.Duration(ms)*time.Millisecond, true
				}
			}
		}
		if !ended {
			out.Truncated = true
			break
		}
		if idSet {
			out.LastEventID = id
		}
		switch {
		case data != nil:
			if typ == "" {
				typ = "message"
			}
			out.Items = append(out.Items, item{Type: typ, Data: strings.Join(data, "\n"), LastEventID: out.LastEventID, Frame: frame, Offset: offset})
		case comments:
			out.Items = append(out.Items, item{Comment: true, LastEventID: out.LastEventID, Frame: frame, Offset: offset})
		}
	}
	return out
}

// fuzzSeeds are the inputs the fuzz target starts from: the WPT bodies, the
// captured streams and known attacks.
func fuzzSeeds(t testing.TB) []string {
	seeds := []string{
		"", "\n", "\r", "\r\n", "\xEF\xBB\xBF", "\xEF\xBB", ":\n\n", "data\n\n", "data:\n\n",
		"id: 1\ndata: a\n\nid\ndata: b\n\n",
		"id: a\x00b\ndata: x\n\n",
		"retry: 9223372036854775807\ndata: x\n\n", "retry: 9223372036854\ndata: x\n\n", "retry: -1\ndata: x\n\n",
		"retry: +5\ndata: x\n\n",
		"data: a\r\r\ndata: b\r\n\r\n",
		"event: heartbeat\ndata: {\"tsMs\":1764500000000}\n\n",
		"data: " + strings.Repeat("y", 300) + "\n\n" + "data: z\n\n",
		"id: 7\ndata: " + strings.Repeat("y", 300),
	}
	seeds = append(seeds, wptBodies()...)
	files, err := filepath.Glob("testdata/streams/*.sse")
	require.NoError(t, err)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		seeds = append(seeds, string(b))
	}
	return seeds
}

// wptBodies returns the bodies of TestWPTBodies.
func wptBodies() []string {
	var out []string
	for _, tc := range wptCases() {
		out = append(out, tc.body)
	}
	return out
}

func TestReferenceAgreesOnSeeds(t *testing.T) {
	for _, in := range fuzzSeeds(t) {
		for _, max := range []int{1, 8, 64, sse.DefaultMaxFrameBytes} {
			want := referenceRun(in, max)
			for name, feed := range feedings([]byte(in)) {
				if !assert.Equal(t, want, decodeRun(t, feed(), max), "input %q, max %d, fed %s", in, max, name) {
					return
				}
			}
		}
	}
}

// FuzzDecoder compares the Decoder, fed in random chunks, with the
// reference on whole inputs, with a small frame bound to reach the
// refusals.
func FuzzDecoder(f *testing.F) {
	for i, in := range fuzzSeeds(f) {
		f.Add([]byte(in), uint64(i), uint16(1+i*7%200))
	}
	f.Fuzz(func(t *testing.T, in []byte, split uint64, max uint16) {
		limit := int(max)
		if limit == 0 {
			limit = sse.DefaultMaxFrameBytes
		}
		want := referenceRun(string(in), limit)
		rng := rand.New(rand.NewPCG(split, split>>32))
		got := decodeRun(t, &chunkReader{chunks: splitRandom(bytes.Clone(in), rng)}, limit)
		require.Equal(t, want, got)
	})
}

// TestWriteFuzzCorpus writes the seeds as files of the committed corpus
// under testdata/fuzz/FuzzDecoder when run with -update.
func TestWriteFuzzCorpus(t *testing.T) {
	if !golden.Update() {
		t.Skip("run with -update to rewrite testdata/fuzz/FuzzDecoder")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzDecoder")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for i, in := range fuzzSeeds(t) {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\nuint64(%d)\nuint16(%d)\n", in, i, 1+i*7%200)
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(body), 0o644))
	}
}
