//go:build linux

package pgstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

var (
	flagMemoryMB      = flag.Int("pgstore.memory.mb", 300, "megabytes of frame data of TestWindowServerMemory's turn (0: skip the test)")
	flagMemoryReaders = flag.Int("pgstore.memory.readers", 8, "readers of TestWindowServerMemory, each from cursor 0")
)

// serverMemoryLimit is the peak RSS TestWindowServerMemory allows the
// server process.
const serverMemoryLimit = 256 << 20

// TestWindowServerMemory: eight readers that follow a 300 MB turn from
// cursor 0 at once keep the server process under 256 MiB of RSS. The turn
// (frames of 64 to 256 KiB, ended) is appended by this process; the server
// is internal/streamserver in a process of its own, stream.NewHandler
// (replay.DefaultPageBytes pages) over a pgstore.Window, so that its peak
// RSS (VmHWM) is its own. Each reader checks every frame's seq, length
// and checksum. Skipped under -short and the race detector (whose
// instrumented readers would take minutes; the server is never
// instrumented).
func TestWindowServerMemory(t *testing.T) {
	needDB(t)
	if testing.Short() || raceEnabled || *flagMemoryMB <= 0 {
		t.Skip("skipped with -short, -race or -pgstore.memory.mb=0")
	}
	bin := buildStreamServer(t)
	w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{MaxFrames: -1, MaxBytes: -1})
	key := replay.Key{ConversationID: "c-memory-" + randomSuffix(), TurnID: "t"}

	// The turn: deltas cut from a buffer of random letters (stored as is:
	// nothing to compress), then the end.
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 17))
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	text := make([]byte, 512<<10)
	for i := range text {
		text[i] = letters[rng.IntN(len(letters))]
	}
	type sum struct {
		n   int
		crc uint32
	}
	var sums []sum
	total := 0
	start := time.Now()
	for seq := int64(1); ; seq++ {
		var ev chatprotocol.Event = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}
		if total < *flagMemoryMB*1_000_000 {
			size := (64 << 10) + rng.IntN(192<<10)
			off := rng.IntN(len(text) - size)
			ev = &chatprotocol.DeltaEvent{Text: string(text[off : off+size])}
		}
		f, err := w.Append(t.Context(), key, &chatprotocol.ChatEventEnvelope{ConversationID: key.ConversationID, TurnID: key.TurnID,
			EventID: "e-" + strconv.FormatInt(seq, 10), Seq: seq, Event: ev})
		require.NoError(t, err)
		sums = append(sums, sum{len(f.Data), crc32.ChecksumIEEE(f.Data)})
		total += len(f.Data)
		if _, end := ev.(*chatprotocol.LifecycleEvent); end {
			break
		}
	}
	appended := time.Since(start)

	srv := startServer(t, bin, "127.0.0.1:0", testDSN, "", nil)
	pid := srv.cmd.Process.Pid
	idle := procStatusKB(t, pid, "VmRSS")

	var peakRSS int64
	sampled := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if kb, err := readProcStatus(pid, "VmRSS"); err == nil {
				peakRSS = max(peakRSS, kb)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	url := srv.base + "/conversations/" + key.ConversationID + "/turns/" + key.TurnID + "/events"
	readers := *flagMemoryReaders
	errs := make([]error, readers)
	start = time.Now()
	var wg sync.WaitGroup
	for i := range readers {
		wg.Go(func() {
			errs[i] = followAll(t.Context(), url, func(seq int64, data []byte) error {
				if seq < 1 || int(seq) > len(sums) {
					return fmt.Errorf("seq %d of a turn of %d", seq, len(sums))
				}
				if s := sums[seq-1]; len(data) != s.n || crc32.ChecksumIEEE(data) != s.crc {
					return fmt.Errorf("seq %d: %d bytes, not the %d appended", seq, len(data), s.n)
				}
				return nil
			}, int64(len(sums)))
		})
	}
	wg.Wait()
	served := time.Since(start)
	close(stop)
	<-sampled
	for i, err := range errs {
		require.NoError(t, err, "reader %d", i)
	}
	hwm := procStatusKB(t, pid, "VmHWM")
	t.Logf("turn: %d frames, %.1f MB of frame data, appended in %v; %d readers from cursor 0 read it all in %v (%.0f MB/s served)",
		len(sums), float64(total)/1e6, appended.Round(time.Millisecond), readers, served.Round(time.Millisecond),
		float64(total*readers)/1e6/served.Seconds())
	t.Logf("server RSS: idle %.1f MiB, peak sampled %.1f MiB, VmHWM %.1f MiB (limit %d MiB)",
		float64(idle)/1024, float64(peakRSS)/1024, float64(hwm)/1024, serverMemoryLimit>>20)
	require.Less(t, hwm*1024, int64(serverMemoryLimit), "the server's peak RSS")
}

// followAll reads the stream at url from its start to its clean end: every
// frame's data goes to check with its id, which must run 1, 2, … through
// last.
func followAll(ctx context.Context, url string, check func(seq int64, data []byte) error, last int64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %s", resp.Status)
	}
	r := bufio.NewReaderSize(resp.Body, 1<<20)
	var data, id []byte // of the frame being read: a blank line ends it
	seq := int64(0)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, io.EOF) && len(line) == 0 {
			if seq != last {
				return fmt.Errorf("the stream ended after seq %d of %d", seq, last)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("after seq %d: %w", seq, err)
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		if v, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			data = append(data[:0], v...)
		} else if v, ok := bytes.CutPrefix(line, []byte("id: ")); ok {
			id = append(id[:0], v...)
		} else if len(line) == 0 && id != nil { // a frame without id is a heartbeat
			n, err := strconv.ParseInt(string(id), 10, 64)
			if err != nil || n != seq+1 {
				return fmt.Errorf("id %q after seq %d", id, seq)
			}
			if err := check(n, data); err != nil {
				return err
			}
			seq, id = n, nil
		}
	}
}

// procStatusKB returns a field of /proc/pid/status in kB.
func procStatusKB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	kb, err := readProcStatus(pid, field)
	require.NoError(t, err)
	return kb
}

func readProcStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(b) {
		if v, ok := bytes.CutPrefix(line, []byte(field+":")); ok {
			v = bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))
			return strconv.ParseInt(string(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
