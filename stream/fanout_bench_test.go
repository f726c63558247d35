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

	"github.com/Papercusp/chat-protocol-go/internal/testkit/servekit"
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
	goroutines      int   // the idle connections' goroutines: measured minus base
	subscribers     int
	failed          int64
	load            string
}

// BenchmarkFanout measures the fan-out of one instance: 10,000 subscribers
// over loopback following 1,000 live turns, one delta per turn every
// 200 ms (5,000 frames/s, 50,000 deliveries/s), served over replay.Memory
// by each protocol (internal/testkit/servekit): the version-1 stream
// ([stream.NewHandler]), the uistream bridge (a GET resume of the running
// turn) and the agui bridge (a POST whose runId names the turn), and, as
// the floor, by a bare net/http handler writing the version-1 SSE bytes
// (internal/testkit/fanout). The server and the client are processes of
// their own; the modes alternate in each iteration (fanoutModes). It
// reports, for each mode (suffix floor, v1, ui or agui), the server's CPU
// time per delivered delta (cpu-ns/frame-*), its heap and stack and its
// goroutines per idle subscriber once all are caught up and before the
// producer starts (idle-B/sub-*, goroutines/sub-*), and the p50/p99
// append-to-delivery latency (the larger of its two runs); and the ratios
// ratio-v1/floor, ratio-ui/v1 and ratio-agui/v1 of the CPU figures. Each
// run's figures are logged with the machine's load. Run it with
//
//	FANOUT_BENCH=1 go test ./stream -run '^$' -bench BenchmarkFanout -benchtime 1x -count 3 -timeout 30m
//
// or at a smaller scale with .ci/fanout. FANOUT_TURNS scales the turns
// down (10 subscribers each), FANOUT_MEASURE sets the measured interval
// (default 15s), FANOUT_WARMUP the warm-up before it (default 5s) and
// FANOUT_CPUPROFILE names a directory for each server's CPU profile of it.
func BenchmarkFanout(b *testing.B) {
	if os.Getenv(fanoutEnv) == "" {
		b.Skip("set " + fanoutEnv + "=1 to run the fan-out benchmark (the whole machine for minutes)")
	}
	turns := envInt(b, "FANOUT_TURNS", 1000)
	measure := envDuration(b, "FANOUT_MEASURE", 15*time.Second)
	warmup := envDuration(b, "FANOUT_WARMUP", 5*time.Second)
	bin := filepath.Join(b.TempDir(), "fanout")
	out, err := exec.Command("go", "build", "-o", bin,
		"github.com/Papercusp/chat-protocol-go/internal/testkit/fanout").CombinedOutput()
	require.NoError(b, err, "%s", out)
	runs := map[string][]fanoutRun{}
	i := 0
	for b.Loop() {
		for _, mode := range fanoutModes {
			i++
			r := runFanout(b, bin, mode, turns, warmup, measure, i)
			b.Logf("%-8s load %s: %d deliveries (%.0f/s), %.0f cpu-ns/frame, cores used: server %.2f client %.2f, p50 %v p99 %v max %v, idle %.0f B/sub heap+stack, %.3f goroutines/sub, %.0f B/sub RSS, %d failed",
				mode, r.load, r.deliveries, float64(r.deliveries)/r.wall.Seconds(), perFrame(r), r.cpu.Seconds()/r.wall.Seconds(), r.clientCPU.Seconds()/r.wall.Seconds(), r.p50, r.p99, r.max,
				perSub(r.heapStack, r), perSub(int64(r.goroutines), r), perSub(r.rss, r), r.failed)
			runs[mode] = append(runs[mode], r)
		}
	}
	for _, mode := range []string{"floor", servekit.Stream, servekit.UIStream, servekit.AGUI} {
		t, suffix := total(runs[mode]), fanoutSuffix[mode]
		b.ReportMetric(perFrame(t), "cpu-ns/frame-"+suffix)
		b.ReportMetric(perSub(t.heapStack, t), "idle-B/sub-"+suffix)
		b.ReportMetric(perSub(int64(t.goroutines), t), "goroutines/sub-"+suffix)
		b.ReportMetric(ms(worst(runs[mode], func(r fanoutRun) time.Duration { return r.p50 })), "p50-ms-"+suffix)
		b.ReportMetric(ms(worst(runs[mode], func(r fanoutRun) time.Duration { return r.p99 })), "p99-ms-"+suffix)
	}
	v1 := perFrame(total(runs[servekit.Stream]))
	b.ReportMetric(v1/perFrame(total(runs["floor"])), "ratio-v1/floor")
	b.ReportMetric(perFrame(total(runs[servekit.UIStream]))/v1, "ratio-ui/v1")
	b.ReportMetric(perFrame(total(runs[servekit.AGUI]))/v1, "ratio-agui/v1")
}

// fanoutModes is the order of one iteration's runs: each mode twice, in an
// order and its reverse, so that a drift of the machine weighs on all alike.
// The bridges serve the same turns from the same kind of window
// (docs/contract.md section 18).
var fanoutModes = []string{"floor", servekit.Stream, servekit.UIStream, servekit.AGUI, servekit.AGUI, servekit.UIStream, servekit.Stream, "floor"}

// fanoutSuffix is each mode's suffix in the metrics' units.
var fanoutSuffix = map[string]string{"floor": "floor", servekit.Stream: "v1", servekit.UIStream: "ui", servekit.AGUI: "agui"}

// runFanout runs one server of mode and one client against it.
func runFanout(b *testing.B, bin, mode string, turns int, warmup, measure time.Duration, i int) fanoutRun {
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
		proto = servekit.Stream // the floor answers the version-1 request
	}
	client, clientIn, clientOut := start(b, bin, "-mode", "client", "-proto", proto, "-addr", addr, "-turns", strconv.Itoa(turns))
	defer stop(b, client, clientIn)
	expect(b, clientOut, "connected ")
	time.Sleep(time.Second) // the last streams park
	var mem struct{ HeapStack, RSS, BaseHeapStack, BaseRSS, Goroutines, BaseGoroutines int64 }
	control(b, http.MethodGet, addr, "idle", &mem)
	r.heapStack, r.rss = mem.HeapStack-mem.BaseHeapStack, mem.RSS-mem.BaseRSS
	r.goroutines = int(mem.Goroutines - mem.BaseGoroutines)
	control(b, http.MethodPost, addr, "start", nil)
	time.Sleep(warmup)
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
		t.goroutines += r.goroutines
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

// perSub is n per subscriber of r.
func perSub(n int64, r fanoutRun) float64 { return float64(n) / float64(r.subscribers) }

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

// envDuration is the duration the environment variable name holds, def
// when it is unset.
func envDuration(b *testing.B, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	require.NoError(b, err, name)
	return d
}

// envInt is the integer the environment variable name holds, def when it
// is unset.
func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	require.NoError(b, err, name)
	return n
}
