package sse_test

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/sse"
)

func TestDecoderFramesCommentsAndOffsets(t *testing.T) {
	in := ": connected\n\n" + // frame 1 at 0: comment only
		"id: 1\ndata: a\n\n" + // frame 2 at 13
		"id: 2\n\n\n\n" + // frame 3 at 28: id only, not returned
		"event: x\n: note\ndata: b\n\n" + // frame 4 at 37
		": bye\r\n\r\n" // frame 5 at 62
	want := []sse.Event{
		{Comment: true, Frame: 1, Offset: 0},
		{Type: "message", Data: []byte("a"), LastEventID: "1", Frame: 2, Offset: 13},
		{Type: "x", Data: []byte("b"), LastEventID: "2", Frame: 4, Offset: 37},
		{Comment: true, LastEventID: "2", Frame: 5, Offset: 62},
	}
	forEachFeeding(t, []byte(in), nil, want, func(evs []sse.Event, _ *sse.Decoder, err error) []sse.Event {
		if err != nil {
			return nil
		}
		return evs
	})
}

func TestDecoderFrameNamesTheTruncatedFrame(t *testing.T) {
	cases := []struct {
		in     string
		n, off int64
	}{
		{"data: a\n\nid: 2\n\ndata: cut", 3, 16}, // a partial first line
		{"data: a\n\ndata: b\ndata: cu", 2, 9},   // complete lines, then a partial one
		{"data: a\n\n: note\nevent: x\n", 2, 9},  // complete lines only
	}
	for _, c := range cases {
		d := sse.NewDecoder(strings.NewReader(c.in), nil)
		var err error
		for err == nil {
			_, err = d.Next()
		}
		require.ErrorIs(t, err, io.EOF)
		assert.True(t, d.Truncated(), "%q", c.in)
		n, off := d.Position()
		assert.Equal(t, c.n, n, "%q", c.in)
		assert.Equal(t, c.off, off, "%q", c.in)
	}
}

func TestDecoderCapturedStreams(t *testing.T) {
	// Every captured stream decodes whole, with the frames a reader of the
	// file counts.
	cases := map[string]struct{ events, comments, heartbeats int }{
		"operator-report-ask-turn.sse": {6, 1, 0},
		"scout-card-turn.sse":          {11, 1, 1},
		"scout-error-turn.sse":         {4, 0, 0},
		"v1-tool-turn.sse":             {9, 0, 0},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := readTestdata("streams/" + name)
			require.NoError(t, err)
			evs, d, err := decodeAll(bytes.NewReader(b), nil)
			require.NoError(t, err)
			assert.False(t, d.Truncated())
			var events, comments, heartbeats int
			for i, ev := range evs {
				assert.Equal(t, int64(i+1), ev.Frame)
				switch {
				case ev.Comment:
					comments++
				case ev.Type == sse.EventHeartbeat:
					heartbeats++
				default:
					events++
					assert.True(t, strings.HasPrefix(string(ev.Data), "{"), "frame %d", ev.Frame)
				}
			}
			assert.Equal(t, want.events, events+heartbeats)
			assert.Equal(t, want.comments, comments)
			assert.Equal(t, want.heartbeats, heartbeats)
		})
	}
}

func TestDecoderMultiLineDataFromCapturedStream(t *testing.T) {
	b, err := readTestdata("streams/scout-error-turn.sse")
	require.NoError(t, err)
	evs, _, err := decodeAll(bytes.NewReader(b), nil)
	require.NoError(t, err)
	require.Len(t, evs, 4)
	assert.Equal(t, "{\"type\":\"token\",\n\"content\":\"Checking your order\"}", string(evs[2].Data))
	assert.Equal(t, "3", evs[2].LastEventID)
}

func TestDecoderFrameBound(t *testing.T) {
	// "data: xx\n" is 9 bytes; with "id: 1\n" the frame is 15.
	frame := "id: 1\ndata: xx\n\n"
	t.Run("a frame of exactly the bound is read", func(t *testing.T) {
		evs, _, err := decodeAll(strings.NewReader(frame), &sse.DecoderOptions{MaxFrameBytes: 15})
		require.NoError(t, err)
		require.Len(t, evs, 1)
		assert.Equal(t, "xx", string(evs[0].Data))
	})
	t.Run("one byte more is refused, and the stream goes on", func(t *testing.T) {
		in := "data: ok\n\n" + frame + "data: next\n\n"
		d := sse.NewDecoder(strings.NewReader(in), &sse.DecoderOptions{MaxFrameBytes: 14})
		ev, err := d.Next()
		require.NoError(t, err)
		assert.Equal(t, "ok", string(ev.Data))

		_, err = d.Next()
		require.ErrorIs(t, err, refusal.ErrFrameTooLarge)
		require.ErrorIs(t, err, refusal.ErrFrameTooLarge)
		assert.Equal(t, refusal.CodeFrameTooLarge, refusal.CodeOf(err))
		n, off := d.Position()
		assert.Equal(t, int64(2), n)
		assert.Equal(t, int64(10), off)

		ev, err = d.Next()
		require.NoError(t, err)
		assert.Equal(t, "next", string(ev.Data))
		assert.Equal(t, int64(3), ev.Frame)
		assert.Empty(t, ev.LastEventID, "the refused frame's id has no effect")
	})
	t.Run("line ends count one byte each", func(t *testing.T) {
		for _, in := range []string{"id: 1\rdata: xx\r\r", "id: 1\r\ndata: xx\r\n\r\n"} {
			evs, _, err := decodeAll(strings.NewReader(in), &sse.DecoderOptions{MaxFrameBytes: 15})
			require.NoError(t, err, "%q", in)
			assert.Len(t, evs, 1)
			_, _, err = decodeAll(strings.NewReader(in), &sse.DecoderOptions{MaxFrameBytes: 14})
			require.ErrorIs(t, err, refusal.ErrFrameTooLarge, "%q", in)
		}
	})
	t.Run("a cut frame over the bound is refused, not dropped", func(t *testing.T) {
		d := sse.NewDecoder(strings.NewReader("data: "+strings.Repeat("z", 20)), &sse.DecoderOptions{MaxFrameBytes: 16})
		_, err := d.Next()
		require.ErrorIs(t, err, refusal.ErrFrameTooLarge)
		_, err = d.Next()
		require.ErrorIs(t, err, io.EOF)
		assert.False(t, d.Truncated())
	})
}

// countingReader gives n bytes of filler without a line end, then tail,
// and counts what it gave.
type countingReader struct {
	filler int
	tail   *strings.Reader
	given  int
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.given < c.filler {
		n := min(len(p), c.filler-c.given)
		for i := range n {
			p[i] = 'x'
		}
		c.given += n
		return n, nil
	}
	n, err := c.tail.Read(p)
	c.given += n
	return n, err
}

func TestDecoderNeverBuffersBeyondTheBound(t *testing.T) {
	// 64 MiB on one line: the refusal comes after reading about the bound,
	// not the whole line, and skipping the rest does not buffer it.
	const max = 64 << 10
	r := &countingReader{filler: 64 << 20, tail: strings.NewReader("\n\ndata: after\n\n")}
	d := sse.NewDecoder(r, &sse.DecoderOptions{MaxFrameBytes: max})
	_, err := d.Next()
	require.ErrorIs(t, err, refusal.ErrFrameTooLarge)
	assert.LessOrEqual(t, r.given, 2*max+64<<10, "bytes read before the refusal")

	ev, err := d.Next()
	require.NoError(t, err)
	assert.Equal(t, "after", string(ev.Data))
	assert.Equal(t, int64(2), ev.Frame)
	assert.Equal(t, int64(64<<20+2), ev.Offset)
}

func TestDecoderDefaultBound(t *testing.T) {
	big := "data: " + strings.Repeat("b", sse.DefaultMaxFrameBytes-7) + "\n\n"
	evs, _, err := decodeAll(strings.NewReader(big), nil)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	assert.Len(t, evs[0].Data, sse.DefaultMaxFrameBytes-7)

	_, _, err = decodeAll(strings.NewReader("data: b"+big[6:]), nil)
	require.ErrorIs(t, err, refusal.ErrFrameTooLarge)
}

func TestDecoderReturnsAnEventWithoutReadingFurther(t *testing.T) {
	tooFar := errors.New("read past the frame")
	for _, first := range []string{"data: a\n\n", "data: a\r\n\r", "data: a\r\r"} {
		r := io.MultiReader(strings.NewReader(first), iotest.ErrReader(tooFar))
		d := sse.NewDecoder(r, nil)
		ev, err := d.Next()
		require.NoError(t, err, "%q", first)
		assert.Equal(t, "a", string(ev.Data))
		_, err = d.Next()
		require.ErrorIs(t, err, tooFar)
	}
}

func TestDecoderReadErrorsAreStickyAndComeAfterTheData(t *testing.T) {
	broken := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(broken))
	d := sse.NewDecoder(r, nil)
	ev, err := d.Next()
	require.NoError(t, err)
	assert.Equal(t, "a", string(ev.Data))
	for range 2 {
		_, err = d.Next()
		require.ErrorIs(t, err, broken)
	}
}

func TestDecoderGivesUpOnAReaderWithoutProgress(t *testing.T) {
	d := sse.NewDecoder(&chunkReader{chunks: make([][]byte, 200)}, nil)
	_, err := d.Next()
	require.ErrorIs(t, err, io.ErrNoProgress)
}

func TestDecoderRetry(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"retry: 1500\n\n", 1500 * time.Millisecond, true},
		{"retry: 0\n\n", 0, true},
		{"retry: 9223372036854\n\n", 9223372036854 * time.Millisecond, true},
		{"retry: 9223372036855\n\n", 0, false},
		{"retry: 99999999999999999999999\n\n", 0, false},
		{"retry: 1.5\n\n", 0, false},
		{"retry: -1\n\n", 0, false},
		{"retry:  5\n\n", 0, false},
		{"retry: 5", 0, false},
		{"retry: 5\n", 5 * time.Millisecond, true},
	}
	for _, tc := range cases {
		_, d, err := decodeAll(strings.NewReader(tc.in), nil)
		require.NoError(t, err)
		got, ok := d.Retry()
		assert.Equal(t, tc.ok, ok, "%q", tc.in)
		assert.Equal(t, tc.want, got, "%q", tc.in)
	}
}

func TestDecoderEventTypes(t *testing.T) {
	// Many distinct names, repeated: each event keeps its own type.
	var in strings.Builder
	var want []string
	for round := range 3 {
		for i := range 200 {
			name := "type-" + strings.Repeat("n", i%70) + string(rune('a'+i%26))
			if round == 1 && i%50 == 0 {
				name = ""
			}
			in.WriteString("event: " + name + "\ndata: x\n\n")
			if name == "" {
				name = "message"
			}
			want = append(want, name)
		}
	}
	evs, _, err := decodeAll(strings.NewReader(in.String()), nil)
	require.NoError(t, err)
	var got []string
	for _, ev := range evs {
		got = append(got, ev.Type)
	}
	assert.Equal(t, want, got)
}

func TestEventClone(t *testing.T) {
	d := sse.NewDecoder(strings.NewReader("data: first\n\ndata: other\n\n"), nil)
	ev, err := d.Next()
	require.NoError(t, err)
	kept := ev.Clone()
	_, err = d.Next()
	require.NoError(t, err)
	assert.Equal(t, "first", string(kept.Data))
	assert.Equal(t, sse.Event{}.Clone(), sse.Event{})
}

func TestDecoderLastEventIDsStayValid(t *testing.T) {
	// Ids of many lengths, short ones sharing blocks and long ones not: each
	// event's LastEventID keeps its value after later events are read.
	var in strings.Builder
	var want []string
	for i := range 5000 {
		id := strings.Repeat(string(rune('a'+i%26)), i%300) + "-" + strconv.Itoa(i)
		in.WriteString("id: " + id + "\ndata: x\n\n")
		want = append(want, id)
	}
	evs, _, err := decodeAll(strings.NewReader(in.String()), nil)
	require.NoError(t, err)
	got := make([]string, 0, len(evs))
	for _, ev := range evs {
		got = append(got, ev.LastEventID)
	}
	assert.Equal(t, want, got)
}

// badCount is a reader that breaks the io.Reader contract.
type badCount int

func (n badCount) Read(p []byte) (int, error) {
	if n < 0 {
		return int(n), nil
	}
	return len(p) + int(n), nil
}

func TestDecoderSurvivesAReaderWithImpossibleCounts(t *testing.T) {
	for _, r := range []badCount{-1, 1} {
		d := sse.NewDecoder(r, nil)
		_, err := d.Next()
		require.Error(t, err)
		assert.NotErrorIs(t, err, io.EOF)
		_, again := d.Next()
		assert.Equal(t, err, again)
	}
}

// A starting LastEventID that could not be an id line's value (CR, LF or
// NUL) is ignored, so a client never echoes it back in a header; a valid
// one is reported until the stream sets another.
func TestDecoderStartingLastEventID(t *testing.T) {
	for _, tc := range []struct{ start, want string }{
		{"7", "7"},
		{"7\r\nX-Injected: 1", ""},
		{"7\n", ""},
		{"a\x00b", ""},
	} {
		d := sse.NewDecoder(strings.NewReader("data: x\n\nid: 9\ndata: y\n\n"), &sse.DecoderOptions{LastEventID: tc.start})
		ev, err := d.Next()
		require.NoError(t, err)
		assert.Equal(t, tc.want, ev.LastEventID, "%q", tc.start)
		ev, err = d.Next()
		require.NoError(t, err)
		assert.Equal(t, "9", ev.LastEventID)
		assert.Equal(t, "9", d.LastEventID())
	}
}
