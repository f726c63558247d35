package sse_test

import (
	"bytes"
	"errors"
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
	"pgregory.net/rapid"

	"github.com/Papercusp/chat-protocol-go/sse"
)

// goldenFrames is what testdata/golden/frames.sse pins: each way a frame
// can be written.
func goldenFrames(t *testing.T) []byte {
	var out []byte
	add := func(f sse.Frame) {
		var err error
		out, err = sse.AppendFrame(out, f)
		require.NoError(t, err)
	}
	out = sse.AppendComment(out, "connected")
	add(sse.Frame{ID: "1", Event: "lifecycle", Data: []byte(`{"schemaVersion":1,"seq":1}`)})
	add(sse.Frame{ID: "2", Data: []byte(`{"type":"token"}`)})
	add(sse.Frame{ID: "3", Event: sse.EventMessage, Data: []byte("message is the default type")})
	add(sse.Frame{Event: "delta", Data: []byte("lf\ncr\rcrlf\r\nend")})
	add(sse.Frame{ID: "5", Data: []byte("trailing line break\n")})
	add(sse.Frame{ID: "6", Data: []byte("\n\nblank lines")})
	add(sse.Frame{ID: "7"})
	add(sse.Frame{ID: " 8", Event: " spaced", Data: []byte(" leading space")})
	add(sse.Frame{ID: "9", Data: []byte("{}"), Retry: 2500 * time.Millisecond})
	add(sse.Frame{Data: []byte("{}"), Retry: time.Microsecond})
	out = sse.AppendHeartbeat(out, 1764500000000)
	out = sse.AppendComment(out, "two\nlines")
	out = sse.AppendComment(out, "")
	return out
}

func TestFramesGolden(t *testing.T) {
	got := goldenFrames(t)
	golden.Check(t, filepath.Join("testdata", "golden", "frames.sse"), got)
}

func TestFramesGoldenDecodes(t *testing.T) {
	evs, d, err := decodeAll(bytes.NewReader(goldenFrames(t)), nil)
	require.NoError(t, err)
	type got struct{ Type, Data, LastEventID string }
	var events []got
	comments := 0
	for _, ev := range evs {
		if ev.Comment {
			comments++
			continue
		}
		events = append(events, got{ev.Type, string(ev.Data), ev.LastEventID})
	}
	assert.Equal(t, []got{
		{"lifecycle", `{"schemaVersion":1,"seq":1}`, "1"},
		{"message", `{"type":"token"}`, "2"},
		{"message", "message is the default type", "3"},
		{"delta", "lf\ncr\ncrlf\nend", "3"},
		{"message", "trailing line break\n", "5"},
		{"message", "\n\nblank lines", "6"},
		{"message", "", "7"},
		{" spaced", " leading space", " 8"},
		{"message", "{}", "9"},
		{"message", "{}", "9"},
		{"heartbeat", `{"tsMs":1764500000000}`, "9"},
	}, events)
	assert.Equal(t, 3, comments)
	retry, ok := d.Retry()
	assert.True(t, ok)
	assert.Equal(t, time.Duration(0), retry, "a positive retry under 1 ms is written as 0")
}

// TestEncoderRewritesCapturedStreams rebuilds each captured stream from its
// fields (read with a naive splitter, not the Decoder), checks that the
// Decoder reads the encoder's bytes as the same events, comments and last
// event ids as the captured ones, and that every id line the encoder wrote
// is the last line of its frame (docs/contract.md section 10.1).
func TestEncoderRewritesCapturedStreams(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "streams", "*.sse"))
	require.NoError(t, err)
	require.Len(t, files, 4)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			want, err := os.ReadFile(file)
			require.NoError(t, err)
			var buf bytes.Buffer
			enc := sse.NewEncoder(&buf)
			blocks := strings.Split(strings.TrimSuffix(string(want), "\n\n"), "\n\n")
			for _, block := range blocks {
				var f sse.Frame
				var comment []string
				var data []string
				for line := range strings.SplitSeq(block, "\n") {
					switch {
					case strings.HasPrefix(line, ": "):
						comment = append(comment, line[2:])
					case strings.HasPrefix(line, "id: "):
						f.ID = line[4:]
					case strings.HasPrefix(line, "event: "):
						f.Event = line[7:]
					case strings.HasPrefix(line, "data: "):
						data = append(data, line[6:])
					default:
						t.Fatalf("unexpected line %q", line)
					}
				}
				f.Data = []byte(strings.Join(data, "\n"))
				switch {
				case comment != nil:
					require.NoError(t, enc.Comment(strings.Join(comment, "\n")))
				case f.Event == sse.EventHeartbeat:
					ts, ok := strings.CutPrefix(string(f.Data), `{"tsMs":`)
					require.True(t, ok)
					ms, err := strconv.ParseInt(strings.TrimSuffix(ts, "}"), 10, 64)
					require.NoError(t, err)
					require.NoError(t, enc.Heartbeat(ms))
				default:
					require.NoError(t, enc.Encode(f))
				}
			}
			wantEvents, _, err := decodeAll(bytes.NewReader(want), nil)
			require.NoError(t, err)
			gotEvents, _, err := decodeAll(bytes.NewReader(buf.Bytes()), nil)
			require.NoError(t, err)
			assert.Equal(t, wantEvents, gotEvents)
			for _, frame := range strings.Split(strings.TrimSuffix(buf.String(), "\n\n"), "\n\n") {
				if i := strings.Index(frame, "id: "); i >= 0 {
					assert.NotContains(t, frame[i:], "\n", "the id line ends the frame: %q", frame)
				}
			}
		})
	}
}

func TestAppendFrameRefusesFieldInjection(t *testing.T) {
	cases := []struct {
		frame sse.Frame
		path  string
	}{
		{sse.Frame{ID: "1\ndata: forged"}, "/id"},
		{sse.Frame{ID: "1\r"}, "/id"},
		{sse.Frame{ID: "\r\n"}, "/id"},
		{sse.Frame{ID: "a\x00b"}, "/id"},
		{sse.Frame{Event: "delta\nid: 99"}, "/event"},
		{sse.Frame{Event: "delta\r"}, "/event"},
		{sse.Frame{Event: "a\x00b"}, "/event"},
		{sse.Frame{Retry: -time.Millisecond}, "/retry"},
	}
	for _, tc := range cases {
		dst := []byte("kept")
		out, err := sse.AppendFrame(dst, tc.frame)
		require.ErrorIs(t, err, refusal.ErrInvalidFrame, "%+v", tc.frame)
		e, ok := errors.AsType[*refusal.Error](err)
		require.True(t, ok)
		assert.Equal(t, tc.path, e.Path)
		assert.Equal(t, "kept", string(out))
	}
	// A NUL is harmless in data.
	out, err := sse.AppendFrame(nil, sse.Frame{Event: "delta", Data: []byte("\x00")})
	require.NoError(t, err)
	assert.Equal(t, "event: delta\ndata: \x00\n\n", string(out))
}

// TestFrameRoundTrip: whatever a host writes, the Decoder reads back, with
// line breaks in data turned into LF.
func TestFrameRoundTrip(t *testing.T) {
	field := rapid.StringMatching(`[^\r\n\x00]{0,12}`)
	rapid.Check(t, func(t *rapid.T) {
		frames := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) sse.Frame {
			return sse.Frame{
				ID:    field.Draw(t, "id"),
				Event: field.Draw(t, "event"),
				Data:  rapid.SliceOfN(rapid.SampledFrom([]byte("ab \r\n:\x00")), 0, 16).Draw(t, "data"),
				Retry: time.Duration(rapid.Int64Range(0, 1e6).Draw(t, "retryMs")) * time.Millisecond,
			}
		}), 1, 8).Draw(t, "frames")
		var stream []byte
		for _, f := range frames {
			var err error
			stream, err = sse.AppendFrame(stream, f)
			require.NoError(t, err)
		}
		evs, d, err := decodeAll(bytes.NewReader(stream), nil)
		require.NoError(t, err)
		require.Len(t, evs, len(frames))
		lastID, retry, hasRetry := "", time.Duration(0), false
		for i, f := range frames {
			if f.ID != "" {
				lastID = f.ID
			}
			if f.Retry > 0 {
				retry, hasRetry = f.Retry, true
			}
			typ := f.Event
			if typ == "" {
				typ = sse.EventMessage
			}
			data := strings.ReplaceAll(strings.ReplaceAll(string(f.Data), "\r\n", "\n"), "\r", "\n")
			assert.Equal(t, typ, evs[i].Type)
			assert.Equal(t, data, string(evs[i].Data))
			assert.Equal(t, lastID, evs[i].LastEventID)
		}
		gotRetry, gotHas := d.Retry()
		assert.Equal(t, hasRetry, gotHas)
		assert.Equal(t, retry, gotRetry)
	})
}

// BenchmarkAppendFrame writes a small delta frame into a reused buffer:
// no allocation is expected.
func BenchmarkAppendFrame(b *testing.B) {
	f := sse.Frame{ID: "123", Event: "delta", Data: []byte(`{"schemaVersion":1,"conversationId":"c-5","turnId":"t-2","eventId":"e-123","seq":123,"event":{"type":"delta","text":"token "}}`)}
	buf, err := sse.AppendFrame(nil, f)
	require.NoError(b, err)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = sse.AppendFrame(buf[:0], f)
	}
}
