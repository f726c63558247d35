package stream_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/servekit"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// bigDeltasEnv gates BenchmarkBigDeltas: it moves gigabytes through
// loopback, and a server that keeps its outputs holds gigabytes of heap.
const bigDeltasEnv = "BIGDELTAS_BENCH"

// bigLag is how many deltas a turn's producer may be ahead of its reader:
// with the window's default bound of 2 MiB per turn, the frame after the
// one a reader is reading is still held when the producer appends.
const bigLag = 2

// BenchmarkBigDeltas measures the peak heap of a server whose turns carry
// big deltas: 8 turns, run concurrently, of 300 deltas of 1 MB each
// (BIGDELTAS_TURNS, BIGDELTAS_DELTAS, BIGDELTAS_BYTES), one reader per
// turn, served in this process over loopback by each protocol
// (internal/testkit/servekit; v1, ui, agui in each iteration) from a
// replay.Memory window of the default bounds. Each reader reads at full
// speed and counts its deltas from the lines' beginnings (servekit.Delta)
// without holding a line; each turn's producer stays at most bigLag deltas
// ahead of its reader, then ends the turn. A goroutine samples the heap
// every millisecond (runtime/metrics): peak-MiB-* is the highest heap in
// use (the HeapInuse of runtime.MemStats) and peak-live-MiB-* the highest
// live heap of a collection, each minus its value before the turns start,
// the mean over iterations; ratio-peak-ui/v1 and ratio-peak-agui/v1
// divide the bridges' peak-MiB by the version-1 handler's. The readers'
// own buffers, some 40 KiB each, are counted. Run it with
//
//	BIGDELTAS_BENCH=1 go test ./stream -run '^$' -bench BenchmarkBigDeltas -benchtime 1x -timeout 30m
//
// or with .ci/fanout.
func BenchmarkBigDeltas(b *testing.B) {
	if os.Getenv(bigDeltasEnv) == "" {
		b.Skip("set " + bigDeltasEnv + "=1 to run the big-delta benchmark (gigabytes through loopback)")
	}
	turns := envInt(b, "BIGDELTAS_TURNS", 8)
	deltas := envInt(b, "BIGDELTAS_DELTAS", 300)
	size := envInt(b, "BIGDELTAS_BYTES", 1_000_000)
	require.Greater(b, deltas, bigLag)
	text := strings.Repeat("x", size)
	peaks := map[string][]heapSample{}
	for b.Loop() {
		for _, proto := range servekit.Protocols() {
			peak, wall := runBigDeltas(b, proto, turns, deltas, text)
			b.Logf("%-8s load %s: %d turns × %d deltas of %d B in %v (%.0f MB/s), peak heap in use +%.1f MiB, peak live heap +%.1f MiB",
				proto, loadAverage(), turns, deltas, size, wall.Round(time.Millisecond),
				float64(turns*deltas*size)/wall.Seconds()/1e6, mib(peak.inUse), mib(peak.live))
			peaks[proto] = append(peaks[proto], peak)
		}
	}
	mean := func(proto string, f func(heapSample) int64) float64 {
		var sum float64
		for _, p := range peaks[proto] {
			sum += mib(f(p))
		}
		return sum / float64(len(peaks[proto]))
	}
	inUse := func(s heapSample) int64 { return s.inUse }
	live := func(s heapSample) int64 { return s.live }
	for _, proto := range servekit.Protocols() {
		b.ReportMetric(mean(proto, inUse), "peak-MiB-"+fanoutSuffix[proto])
		b.ReportMetric(mean(proto, live), "peak-live-MiB-"+fanoutSuffix[proto])
	}
	v1 := mean(servekit.Stream, inUse)
	b.ReportMetric(mean(servekit.UIStream, inUse)/v1, "ratio-peak-ui/v1")
	b.ReportMetric(mean(servekit.AGUI, inUse)/v1, "ratio-peak-agui/v1")
}

// runBigDeltas runs turns turns of deltas deltas of text, served in proto,
// each read by one reader, and returns the heap's peak over its value
// before they start and the wall time they took.
func runBigDeltas(b *testing.B, proto string, turns, deltas int, text string) (heapSample, time.Duration) {
	const conversation = "c"
	window := replay.NewMemory(nil)
	mux := http.NewServeMux()
	closeHandler, err := servekit.Mount(mux, proto, window, servekit.Options{Conversation: conversation})
	require.NoError(b, err)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer closeHandler()
	transport := &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: turns}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()

	runtime.GC()
	runtime.GC()
	base := readHeap()
	stop, peak := sampleHeap(time.Millisecond)
	begin := time.Now()
	errs := make(chan error, 2*turns)
	var wg sync.WaitGroup
	for n := range turns {
		key := replay.Key{ConversationID: conversation, TurnID: "big-" + strconv.Itoa(n)}
		appendEvent := func(seq int64, ev chatprotocol.Event) error {
			_, err := window.Append(ctx, key, &chatprotocol.ChatEventEnvelope{ConversationID: key.ConversationID, TurnID: key.TurnID,
				EventID: key.TurnID + ":" + strconv.FormatInt(seq, 10), Seq: seq, Event: ev})
			return err
		}
		require.NoError(b, appendEvent(1, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}))
		delivered := make(chan struct{}, deltas)
		wg.Add(2)
		go func() { // the reader
			defer wg.Done()
			c := &deltaCounter{proto: proto, onDelta: func() {
				select {
				case delivered <- struct{}{}:
				default: // more deltas than appended: reported below
				}
			}}
			errs <- readTurn(ctx, client, proto, srv.URL, key, c)
			if c.deltas != deltas || c.bytes < int64(deltas*len(text)) {
				errs <- fmt.Errorf("%s %s: %d deltas in %d bytes, want %d deltas of %d bytes", proto, key.TurnID, c.deltas, c.bytes, deltas, len(text))
			}
		}()
		go func() { // the producer
			defer wg.Done()
			for i := 1; i <= deltas; i++ {
				if i > bigLag {
					select {
					case <-delivered:
					case <-ctx.Done():
						errs <- fmt.Errorf("%s %s: delta %d not delivered: %w", proto, key.TurnID, i-bigLag, ctx.Err())
						return
					}
				}
				if err := appendEvent(int64(i+1), &chatprotocol.DeltaEvent{Text: text}); err != nil {
					errs <- err
					return
				}
			}
			errs <- appendEvent(int64(deltas+2), &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted})
		}()
	}
	wg.Wait()
	wall := time.Since(begin)
	close(stop)
	p := <-peak
	close(errs)
	for err := range errs {
		require.NoError(b, err)
	}
	return heapSample{inUse: p.inUse - base.inUse, live: p.live - base.live}, wall
}

// readTurn reads key's turn in proto from the server at base into c until
// the stream ends.
func readTurn(ctx context.Context, client *http.Client, proto, base string, key replay.Key, c *deltaCounter) error {
	req, err := servekit.NewRequest(ctx, proto, base, key)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: status %d", proto, key.TurnID, resp.StatusCode)
	}
	_, err = io.Copy(c, resp.Body)
	return err
}

// deltaHead is the most of a line a deltaCounter keeps: enough to hold a
// delta line's beginning up to its text.
const deltaHead = 512

// deltaCounter is an io.Writer that counts the text deltas of a stream in
// proto and its bytes, keeping no more of a line than its first deltaHead
// bytes; onDelta is called at each delta.
type deltaCounter struct {
	proto   string
	onDelta func()
	deltas  int
	bytes   int64

	head []byte // the current line's first bytes
	read bool   // the current line was classified
}

func (c *deltaCounter) Write(p []byte) (int, error) {
	c.bytes += int64(len(p))
	n := len(p)
	for len(p) > 0 {
		seg, end := p, bytes.IndexByte(p, '\n')
		if end >= 0 {
			seg = p[:end+1]
		}
		if !c.read {
			c.head = append(c.head, seg[:min(len(seg), deltaHead-len(c.head))]...)
			if end >= 0 || len(c.head) == deltaHead {
				c.read = true
				if _, ok := servekit.Delta(c.proto, c.head); ok {
					c.deltas++
					c.onDelta()
				}
			}
		}
		if end >= 0 {
			c.head, c.read = c.head[:0], false
		}
		p = p[len(seg):]
	}
	return n, nil
}

// heapSample is the heap in use (in-use spans, runtime.MemStats.HeapInuse)
// and the live heap of the last collection, in bytes.
type heapSample struct{ inUse, live int64 }

// heapMetrics are the runtime/metrics a heapSample adds up.
var heapMetrics = []string{"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes", "/gc/heap/live:bytes"}

// readHeap samples the heap, without stopping the world.
func readHeap() heapSample {
	s := make([]metrics.Sample, len(heapMetrics))
	for i, name := range heapMetrics {
		s[i].Name = name
	}
	metrics.Read(s)
	return heapSample{inUse: int64(s[0].Value.Uint64() + s[1].Value.Uint64()), live: int64(s[2].Value.Uint64())}
}

// sampleHeap samples the heap every period until stop is closed, then
// sends the highest of each figure on peak.
func sampleHeap(period time.Duration) (stop chan struct{}, peak chan heapSample) {
	stop, peak = make(chan struct{}), make(chan heapSample, 1)
	go func() {
		t := time.NewTicker(period)
		defer t.Stop()
		var p heapSample
		for {
			s := readHeap()
			p.inUse, p.live = max(p.inUse, s.inUse), max(p.live, s.live)
			select {
			case <-stop:
				peak <- p
				return
			case <-t.C:
			}
		}
	}()
	return stop, peak
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
