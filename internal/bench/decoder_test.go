package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	gosse "github.com/tmaxmax/go-sse"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/sse"
)

// maxEvent bounds both parsers: above the 64 KiB frames, below the stream.
const maxEvent = 1 << 20

// smallDeltas is a stream of n version-1 delta envelopes as a host writes
// them: about 190 bytes a frame, an id, an event name and one data line.
func smallDeltas(n int) []byte {
	var b []byte
	for i := 1; i <= n; i++ {
		b = fmt.Appendf(b, "id: %d\nevent: delta\ndata: "+
			`{"schemaVersion":1,"conversationId":"c-5","turnId":"t-2","eventId":"e-%d","seq":%d,"event":{"type":"delta","text":"token %d "}}`+
			"\n\n", i, i, i, i)
	}
	return b
}

// largeFrames is a stream of n frames whose data line is 64 KiB.
func largeFrames(n int) []byte {
	payload := `{"type":"tool_result","output":"` + strings.Repeat("x", 64<<10-33) + `"}`
	var b []byte
	for i := 1; i <= n; i++ {
		b = fmt.Appendf(b, "id: %d\nevent: tool_result\ndata: %s\n\n", i, payload)
	}
	return b
}

// event is what both parsers give for one event.
type event struct{ Type, Data, LastEventID string }

func readOurs(t testing.TB, stream []byte) []event {
	d := sse.NewDecoder(bytes.NewReader(stream), &sse.DecoderOptions{MaxFrameBytes: maxEvent})
	var out []event
	for {
		ev, err := d.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if !ev.Comment {
			out = append(out, event{ev.Type, string(ev.Data), ev.LastEventID})
		}
	}
}

func readGoSSE(t testing.TB, stream []byte) []event {
	var out []event
	for ev, err := range gosse.Read(bytes.NewReader(stream), &gosse.ReadConfig{MaxEventSize: maxEvent}) {
		require.NoError(t, err)
		if ev.Type == "" {
			ev.Type = sse.EventMessage
		}
		out = append(out, event{ev.Type, ev.Data, ev.LastEventID})
	}
	return out
}

// TestParsersAgree checks that the benchmarks compare like with like: both
// parsers read the benchmark streams and the captured streams alike.
func TestParsersAgree(t *testing.T) {
	streams := map[string][]byte{"small deltas": smallDeltas(500), "64 KiB frames": largeFrames(4)}
	files, err := filepath.Glob("../../sse/testdata/streams/*.sse")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		streams[filepath.Base(f)] = b
	}
	for name, stream := range streams {
		ours := readOurs(t, stream)
		require.NotEmpty(t, ours, name)
		assert.Equal(t, readGoSSE(t, stream), ours, name)
	}
}

// benchDecode runs read over stream b.N times, reporting MB/s and the
// allocations per event.
// allocs/event counts every allocation of a run, the decoder's own
// included, divided by the events it read.
func benchDecode(b *testing.B, stream []byte, read func(r io.Reader) (events, dataBytes int)) {
	events, want := read(bytes.NewReader(stream))
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	runs := 0
	for b.Loop() {
		if _, got := read(bytes.NewReader(stream)); got != want {
			b.Fatalf("read %d data bytes, want %d", got, want)
		}
		runs++
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(runs*events), "allocs/event")
}

func ours(r io.Reader) (events, dataBytes int) {
	d := sse.NewDecoder(r, &sse.DecoderOptions{MaxFrameBytes: maxEvent})
	for {
		ev, err := d.Next()
		if err != nil {
			return events, dataBytes
		}
		events++
		dataBytes += len(ev.Data)
	}
}

func goSSE(r io.Reader) (events, dataBytes int) {
	for ev, err := range gosse.Read(r, &gosse.ReadConfig{MaxEventSize: maxEvent}) {
		if err != nil {
			return events, dataBytes
		}
		events++
		dataBytes += len(ev.Data)
	}
	return events, dataBytes
}

// BenchmarkDecode reads the same streams with both parsers. Compare the
// ns/op (or MB/s) and allocs/event of each pair; see README.md.
func BenchmarkDecode(b *testing.B) {
	streams := []struct {
		name   string
		stream []byte
	}{
		{"small-deltas", smallDeltas(10000)},
		{"64KiB-frames", largeFrames(64)},
	}
	for _, s := range streams {
		b.Run("stream="+s.name, func(b *testing.B) {
			b.Run("impl=chatprotocol", func(b *testing.B) { benchDecode(b, s.stream, ours) })
			b.Run("impl=go-sse", func(b *testing.B) { benchDecode(b, s.stream, goSSE) })
		})
	}
}
