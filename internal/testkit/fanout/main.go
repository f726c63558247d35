// Command fanout is the load harness of the stream package's fan-out
// benchmark (BenchmarkFanout in stream/fanout_bench_test.go, which builds
// and drives it): one server process and one client process on the same
// machine, over loopback.
//
//	fanout -mode stream -turns 1000 -pace 200ms   # stream.NewHandler over replay.NewMemory
//	fanout -mode floor  -turns 1000 -pace 200ms   # the floor: a bare net/http handler
//	fanout -mode uistream -turns 1000             # uistream.Handler's resume over the same window
//	fanout -mode agui -turns 1000                 # agui.Handler over the same window
//	fanout -mode client -addr HOST:PORT -turns 1000 -per 10 [-proto uistream|agui]
//
// The three protocols' handlers, requests and delta lines are those of
// internal/testkit/servekit; the floor answers the version-1 request. A
// server prints "addr HOST:PORT" on stdout once it listens, then serves
// turn t-N of conversation c for N in [0, turns) and, for the benchmark,
// the control endpoints of control.go: /fanout/idle (its memory and
// goroutines over the open connections), /fanout/start (starts the
// producer: every turn gets one delta every pace, its text the append's
// wall-clock time in Unix nanoseconds), /fanout/mark and /fanout/stop (its
// CPU time between the two). Nothing is appended before /fanout/start:
// each turn holds one frame, lifecycle started, so that a subscriber is
// caught up once it has the data lines its protocol sends for it.
//
// The client opens per connections to each turn, prints "connected N" once
// every one is caught up, and then reads commands on
// stdin: "mark" starts counting delivered deltas and their latency (now
// minus the time in the text), "report" prints them as one JSON line
// (see report in client.go). It exits when stdin closes.
//
// Both raise RLIMIT_NOFILE to what they need, at most the hard limit.
package main

import (
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/servekit"
)

// config is what the flags set.
type config struct {
	mode       string
	proto      string
	addr       string
	turns      int
	per        int
	pace       time.Duration
	cpuprofile string
}

func main() {
	var c config
	flag.StringVar(&c.mode, "mode", "stream", "stream, floor, uistream, agui or client")
	flag.StringVar(&c.proto, "proto", "stream", "client: the protocol its requests speak: stream, uistream or agui")
	flag.StringVar(&c.addr, "addr", "127.0.0.1:0", "server: listen address; client: the server's address")
	flag.IntVar(&c.turns, "turns", 1000, "live turns")
	flag.IntVar(&c.per, "per", 10, "client: connections per turn")
	flag.DurationVar(&c.pace, "pace", 200*time.Millisecond, "server: time between two deltas of a turn")
	flag.StringVar(&c.cpuprofile, "cpuprofile", "", "server: write a CPU profile of the measured interval (mark to stop) to this file")
	flag.Parse()
	var err error
	switch c.mode {
	case servekit.Stream, servekit.UIStream, servekit.AGUI:
		err = serve(c, newWindowServer(c.mode))
	case "floor":
		err = serve(c, newFloorServer)
	case "client":
		err = runClient(c)
	default:
		err = fmt.Errorf("unknown -mode %q", c.mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(1)
	}
}

// raiseFiles raises the soft RLIMIT_NOFILE to want, or to the hard limit
// when that is lower, and returns the limit set.
func raiseFiles(want uint64) (uint64, error) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, err
	}
	l.Cur = min(want, l.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, err
	}
	return l.Cur, nil
}
