package stream_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fanoutEnv gates BenchmarkFanout: it takes the whole machine for minutes
// and 20,000 open files, so neither go test ./... nor -bench . runs it.
const fanoutEnv = "FANOUT_BENCH"

// fanoutRun is one process pair's figures: the server's CPU time over the
// measured interval, the deltas the client had in it and their latency,
// and the server's memory over the idle connections.
type fanoutRun struct {
	mode            string
	cpu             time.Duration
	clientCPU, wall time.Duration // the client process's CPU time and the interval's wall time
	deliveries      int64
	p50, p99, max   time.Duration
	heapStack, rss  int64 // the idle connections' share, in bytes: measured minus base
	subscribers     int
	failed          int64
	load            string
}

// BenchmarkFanout measures the fan-out of one instance: 10,000 subscribers
// over loopback following 1,000 live turns, one delta per turn every
// 200 ms (5,000 frames/s, 50,000 deliveries/s), served by stream.Handler
// over replay.Memory and, as the floor, by a bare net/http handler writing
// the same SSE bytes (internal/testkit/fanout). The server and the client
// are processes of their own; the modes alternate, floor, stream, floor,
// stream, in each iteration. It reports the server's CPU time per
// delivered frame for both and their ratio, the stream's p50/p99
// append-to-delivery latency (the larger of its two runs) and its heap and
// stack (and resident set) per idle subscriber, measured once all are
// caught up and before the producer starts; each run's figures are logged
// with the machine's load. Run it with
//
//	FANOUT_BENCH=1 go test ./stream -run '^$' -bench BenchmarkFanout -benchtime 1x -count 3 -timeout 30m
//
// FANOUT_TURNS scales the turns down (10 subscribers each),
// FANOUT_MEASURE sets the measured interval (default 15s) and
// FANOUT_CPUPROFILE names a directory for each server's CPU profile of it.
func BenchmarkFanout(b *testing.B) {
	if os.Getenv(fanoutEnv) == "" {
		b.Skip("set " + fanoutEnv + "=1 to run the fan-out benchmark (the whole machine for minutes)")
	}
	turns := envInt(b, "FANOUT_TURNS", 1000)
	measure := 15 * time.Second
	if v := os.Getenv("FANOUT_MEASURE"); v != "" {
		var err error
		measure, err = time.ParseDuration(v)
		require.NoError(b, err)
	}
	bin := filepath.Join(b.TempDir(), "fanout")
	out, err := exec.Command("go", "build", "-o", bin,
		"github.com/Papercusp/chat-protocol-go/internal/testkit/fanout").CombinedOutput()
	require.NoError(b, err, "%s", out)
	runs := map[string][]fanoutRun{}
	i := 0
	for b.Loop() {
		for _, mode := range fanoutModes {
			i++
			r := runFanout(b, bin, mode, turns, measure, i)
			b.Logf("%-6s load %s: %d deliveries (%.0f/s), %.0f cpu-ns/frame, cores used: server %.2f client %.2f, p50 %v p99 %v max %v, idle %.0f B/sub heap+stack, %.0f B/sub RSS, %d failed",
				mode, r.load, r.deliveries, float64(r.deliveries)/r.wall.Seconds(), perFrame(r), r.cpu.Seconds()/r.wall.Seconds(), r.clientCPU.Seconds()/r.wall.Seconds(), r.p50, r.p99, r.max,
				float64(r.heapStack)/float64(r.subscribers), float64(r.rss)/float64(r.subscribers), r.failed)
			runs[mode] = append(runs[mode], r)
		}
	}
	floor, strm := total(runs["floor"]), total(runs["stream"])
	b.ReportMetric(perFrame(floor), "floor-cpu-ns/frame")
	b.ReportMetric(perFrame(strm), "stream-cpu-ns/frame")
	b.ReportMetric(perFrame(strm)/perFrame(floor), "cpu-ratio")
	b.ReportMetric(ms(worst(runs["stream"], func(r fanoutRun) time.Duration { return r.p50 })), "p50-ms")
	b.ReportMetric(ms(worst(runs["stream"], func(r fanoutRun) time.Duration { return r.p99 })), "p99-ms")
	b.ReportMetric(ms(worst(runs["floor"], func(r fanoutRun) time.Duration { return r.p99 })), "floor-p99-ms")
	b.ReportMetric(float64(strm.heapStack)/float64(strm.subscribers), "idle-B/sub")
	b.ReportMetric(float64(strm.rss)/float64(strm.subscribers), "idle-rss-B/sub")
	b.ReportMetric(float64(floor.heapStack)/float64(floor.subscribers), "floor-idle-B/sub")
	for _, bridge := range []string{"uistream", "agui"} {
		br := total(runs[bridge])
		b.ReportMetric(perFrame(br), bridge+"-cpu-ns/frame")
		b.ReportMetric(perFrame(br)/perFrame(strm), bridge+"-vs-stream")
		b.ReportMetric(ms(worst(runs[bridge], func(r fanoutRun) time.Duration { return r.p99 })), bridge+"-p99-ms")
	}
}

// fanoutModes is the order of one iteration's runs: each mode twice, in an
// order and its reverse, so that a drift of the machine weighs on all alike.
// The bridges (uistream, agui) serve the stream mode's turns from the same
// window (docs/contract.md section 18).
var fanoutModes = []string{"floor", "stream", "uistream", "agui", "agui", "uistream", "stream", "floor"}

// runFanout runs one server of mode and one client against it.
func runFanout(b *testing.B, bin, mode string, turns int, measure time.Duration, i int) fanoutRun {
	r := fanoutRun{mode: mode, subscribers: turns * 10, load: loadAverage()}
	args := []string{"-mode", mode, "-turns", strconv.Itoa(turns)}
	if dir := os.Getenv("FANOUT_CPUPROFILE"); dir != "" {
		args = append(args, "-cpuprofile", filepath.Join(dir, fmt.Sprintf("%s-%d-%d.pprof", mode, time.Now().Unix(), i)))
	}
	server, serverIn, serverOut := start(b, bin, args...)
	defer stop(b, server, serverIn)
	line := expect(b, serverOut, "addr ")
	addr := strings.Fields(line)[1]
	proto := mode
	if mode == "floor" {
		proto = "stream"
	}
	client, clientIn, clientOut := start(b, bin, "-mode", "client", "-proto", proto, "-addr", addr, "-turns", strconv.Itoa(turns))
	defer stop(b, client, clientIn)
	expect(b, clientOut, "connected ")
	time.Sleep(time.Second) // the last streams park
	var mem struct{ HeapStack, RSS, BaseHeapStack, BaseRSS int64 }
	control(b, http.MethodGet, addr, "idle", &mem)
	r.heapStack, r.rss = mem.HeapStack-mem.BaseHeapStack, mem.RSS-mem.BaseRSS
	control(b, http.MethodPost, addr, "start", nil)
	time.Sleep(5 * time.Second) // warm-up
	control(b, http.MethodPost, addr, "mark", nil)
	_, err := io.WriteString(clientIn, "mark\n")
	require.NoError(b, err)
	time.Sleep(measure)
	_, err = io.WriteString(clientIn, "report\n")
	require.NoError(b, err)
	var u struct{ CPUNanos, WallNanos int64 }
	control(b, http.MethodPost, addr, "stop", &u)
	var rep struct{ Deliveries, P50, P99, Max, Failed, CPUNanos int64 }
	require.NoError(b, json.Unmarshal([]byte(expect(b, clientOut, "{")), &rep))
	r.cpu, r.deliveries, r.failed = time.Duration(u.CPUNanos), rep.Deliveries, rep.Failed
	r.clientCPU, r.wall = time.Duration(rep.CPUNanos), time.Duration(u.WallNanos)
	r.p50, r.p99, r.max = time.Duration(rep.P50), time.Duration(rep.P99), time.Duration(rep.Max)
	require.Positive(b, r.deliveries, "%s: no delta delivered", mode)
	if r.failed > 0 {
		b.Errorf("%s: %d connections failed", mode, r.failed)
	}
	return r
}

// start starts bin with args, its stdin and stdout piped, stderr ours.
func start(b *testing.B, bin string, args ...string) (*exec.Cmd, io.WriteCloser, *bufio.Scanner) {
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(b, err)
	out, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	return cmd, in, bufio.NewScanner(out)
}

// stop closes cmd's stdin, which ends it, and kills it if it has not
// ended within 10 seconds.
func stop(b *testing.B, cmd *exec.Cmd, in io.Closer) {
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}

// expect reads lines of out until one starts with prefix, within 2 minutes.
func expect(b *testing.B, out *bufio.Scanner, prefix string) string {
	got := make(chan string, 1)
	go func() {
		for out.Scan() {
			if strings.HasPrefix(out.Text(), prefix) {
				got <- out.Text()
				return
			}
		}
		close(got)
	}()
	select {
	case line, ok := <-got:
		require.True(b, ok, "the process ended before printing %q", prefix)
		return line
	case <-time.After(2 * time.Minute):
		b.Fatalf("no %q line within 2 minutes", prefix)
		return ""
	}
}

// control calls the server's control endpoint name, decoding its answer into v.
func control(b *testing.B, method, addr, name string, v any) {
	req, err := http.NewRequest(method, "http://"+addr+"/fanout/"+name, nil)
	require.NoError(b, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b, err)
	defer resp.Body.Close()
	require.Equal(b, http.StatusOK, resp.StatusCode, name)
	if v != nil {
		require.NoError(b, json.NewDecoder(resp.Body).Decode(v))
	}
}

// total adds up runs of one mode; the latencies are left out.
func total(runs []fanoutRun) fanoutRun {
	var t fanoutRun
	for _, r := range runs {
		t.cpu += r.cpu
		t.deliveries += r.deliveries
		t.heapStack += r.heapStack
		t.rss += r.rss
		t.subscribers += r.subscribers
	}
	return t
}

// worst is the largest of f over runs.
func worst(runs []fanoutRun, f func(fanoutRun) time.Duration) time.Duration {
	var w time.Duration
	for _, r := range runs {
		w = max(w, f(r))
	}
	return w
}

func perFrame(r fanoutRun) float64 { return float64(r.cpu.Nanoseconds()) / float64(r.deliveries) }

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// loadAverage is the 1-, 5- and 15-minute load averages, as uptime shows
// them, and the share of the last 10 seconds in which some task waited for
// a CPU (/proc/pressure/cpu, where the kernel has it).
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	load := strings.Join(strings.Fields(string(b))[:3], " ")
	if p, err := os.ReadFile("/proc/pressure/cpu"); err == nil {
		if f := strings.Fields(string(p)); len(f) > 1 && strings.HasPrefix(f[1], "avg10=") {
			load += ", cpu pressure " + strings.TrimPrefix(f[1], "avg10=") + "%"
		}
	}
	return load
}

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(b, err, name)
	return n
}
