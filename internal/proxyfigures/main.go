// Command proxyfigures measures the table of docs/contract.md section
// 14.5: the stream package's Handler on loopback, a frame every 50 ms,
// behind nginx, Caddy and HAProxy, each with its shipped configuration
// plus the lines of a row. For every row it prints whether the stream is
// live, the latency the proxy adds to each frame against the direct path
// in the same run (p50, p99), how a server abort (the Handler's Close, as
// a graceful shutdown does) reaches the client, whether a replay of a
// turn that has not ended comes at once or is held until the body ends,
// whether resuming with Last-Event-ID and the 204 after the end go
// through, and, with -idle, how long a stream without heartbeats lasts.
//
// It needs the proxies on PATH and their shipped configuration files
// (Debian's nginx, caddy and haproxy packages); .ci/proxies installs them
// and runs it:
//
//	bash .ci/proxies            # the table, about a minute
//	bash .ci/proxies -idle      # and the idle timeouts, about a minute more
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run parses args, measures every row and prints the table to stdout; it
// returns the exit status (1 when a proxy failed to start or a probe
// failed, 2 for bad flags).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("proxyfigures", flag.ContinueOnError)
	fs.SetOutput(stderr)
	frames := fs.Int("frames", 200, "deltas of the live turn each row follows, one every 50ms")
	idle := fs.Bool("idle", false, "also measure how long a stream without heartbeats lasts behind each row (up to -idle-limit, rows at once)")
	idleLimit := fs.Duration("idle-limit", 75*time.Second, "the longest an idle stream is watched")
	replayed := fs.Int("replay", 40, "frames of the replay probe's turn")
	replays := fs.Int("replays", 5, "times the replay probe runs for each row")
	only := fs.String("only", "", "measure only the rows whose name contains this")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	up, err := startUpstream()
	if err != nil {
		fmt.Fprintf(stderr, "proxyfigures: %v\n", err)
		return 1
	}
	defer up.close()

	fmt.Fprintf(stdout, "versions: %s; %s; %s; %s\n", version("nginx"), "Caddy "+version("caddy"), version("haproxy"), goVersion())
	fmt.Fprintf(stdout, "a live turn of %d deltas, one every %s; every row's reader and the direct reader follow it at once\n\n", *frames, pace)
	fmt.Fprintln(stdout, "| row | lines added | live | added latency p50 / p99 | a server abort reaches the client as | replay of a turn not ended | resume, 204 | Content-Encoding |")
	fmt.Fprintln(stdout, "| --- | --- | --- | --- | --- | --- | --- | --- |")
	status := 0
	var rows []proxyConfig
	for _, c := range configs {
		if strings.Contains(c.name, *only) {
			rows = append(rows, c)
		}
	}
	direct, err := probeAbort(ctx, up, up.addr, -1)
	if err != nil {
		fmt.Fprintf(stderr, "proxyfigures: direct abort: %v\n", err)
		status = 1
	}
	for i, c := range rows {
		if ctx.Err() != nil {
			return 1
		}
		line, err := measureRow(ctx, up, c, i, *frames, *replayed, *replays)
		if err != nil {
			fmt.Fprintf(stderr, "proxyfigures: %s: %v\n", c.name, err)
			status = 1
			continue
		}
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "\nwithout a proxy, a server abort reaches the client as: %s\n", direct)
	if *idle {
		fmt.Fprintf(stdout, "\nidle timeouts (a stream without heartbeats, watched up to %s, rows at once):\n", *idleLimit)
		if err := measureIdle(ctx, up, rows, *idleLimit, stdout); err != nil {
			fmt.Fprintf(stderr, "proxyfigures: idle: %v\n", err)
			status = 1
		}
	}
	return status
}

// measureRow starts row c's proxy, runs its probes and returns its line
// of the table.
func measureRow(ctx context.Context, up *upstream, c proxyConfig, n, frames, replayFrames, replays int) (string, error) {
	p, err := startProxy(ctx, c, up.addr)
	if err != nil {
		return "", err
	}
	defer p.stop()
	f, err := probeLatency(ctx, up, p.addr, n, frames)
	if err != nil {
		return "", fmt.Errorf("latency: %w", err)
	}
	abort, err := probeAbort(ctx, up, p.addr, n)
	if err != nil {
		return "", fmt.Errorf("abort: %w", err)
	}
	var held []string
	for j := range replays {
		r, err := probeReplay(ctx, up, p.addr, n*1000+j, replayFrames)
		if err != nil {
			return "", fmt.Errorf("replay: %w", err)
		}
		if strings.HasPrefix(r, "held") {
			held = append(held, r)
		}
	}
	replayed := fmt.Sprintf("at once in %d of %d", replays, replays)
	if len(held) > 0 {
		replayed = fmt.Sprintf("held in %d of %d (%s)", len(held), replays, strings.Join(held, "; "))
	}
	resume, err := probeResume(ctx, up, p.addr, n, int64(frames)+2)
	if err != nil {
		return "", fmt.Errorf("resume: %w", err)
	}
	live := "yes"
	if !f.live() {
		live = fmt.Sprintf("no: p99 %s from append to arrival", ms(f.proxied99))
	}
	lines := c.lines
	if lines == "" {
		lines = "-"
	}
	enc := f.encoding
	if enc == "" {
		enc = "none"
	}
	return fmt.Sprintf("| %s | `%s` | %s | %s / %s (direct: %s / %s from append) | %s | %s | %s | %s |",
		c.name, lines, live, ms(f.added50), ms(f.added99), ms(f.direct50), ms(f.direct99), abort, replayed, resume, enc), nil
}

// measureIdle starts every row's proxy and watches an idle stream behind
// each, at once.
func measureIdle(ctx context.Context, up *upstream, rows []proxyConfig, limit time.Duration, out io.Writer) error {
	type idleResult struct {
		figure string
		err    error
	}
	results := make([]chan idleResult, len(rows))
	for i, c := range rows {
		results[i] = make(chan idleResult, 1)
		p, err := startProxy(ctx, c, up.addr)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		defer p.stop()
		go func() {
			figure, err := probeIdle(ctx, up, p.addr, i, limit)
			results[i] <- idleResult{figure, err}
		}()
	}
	for i, c := range rows {
		r := <-results[i]
		if r.err != nil {
			return fmt.Errorf("%s: %w", c.name, r.err)
		}
		fmt.Fprintf(out, "- %s: %s\n", c.name, r.figure)
	}
	return nil
}

// goVersion is the Go release the upstream runs on.
func goVersion() string { return "Go " + strings.TrimPrefix(runtime.Version(), "go") }
