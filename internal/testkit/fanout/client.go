package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/servekit"
)

// report is the line the client prints on "report": the deltas delivered
// since "mark" (over every connection), their latency quantiles and
// maximum in nanoseconds, the connections that failed, and the client's
// own CPU time (user and system) over the interval, in nanoseconds.
type report struct {
	Deliveries int64 `json:"deliveries"`
	P50        int64 `json:"p50"`
	P99        int64 `json:"p99"`
	Max        int64 `json:"max"`
	Failed     int64 `json:"failed"`
	CPUNanos   int64 `json:"cpuNanos"`
}

// client is the load generator's state.
type client struct {
	measuring atomic.Bool
	latency   histogram
	failed    atomic.Int64
}

// runClient opens c.per connections to each of c.turns turns of the server
// at c.addr and records the deltas' latency as the package doc says.
func runClient(c config) error {
	n := c.turns * c.per
	if _, err := raiseFiles(uint64(n + 1000)); err != nil {
		return err
	}
	cl := &client{}
	var caught sync.WaitGroup
	caught.Add(n)
	for i := range n {
		conn, err := dial(c.addr)
		if err != nil {
			return fmt.Errorf("connection %d: %w", i, err)
		}
		go cl.follow(conn, "http://"+c.addr, c.proto, i%c.turns, caught.Done)
	}
	caught.Wait()
	fmt.Printf("connected %d\n", n)
	in := bufio.NewScanner(os.Stdin)
	var markCPU time.Duration
	for in.Scan() {
		switch in.Text() {
		case "mark":
			cl.latency.reset()
			cl.measuring.Store(true)
			markCPU = cpuTime()
		case "report":
			cl.measuring.Store(false)
			h := &cl.latency
			b, _ := json.Marshal(report{Deliveries: h.total(), P50: int64(h.quantile(0.50)), P99: int64(h.quantile(0.99)),
				Max: h.max.Load(), Failed: cl.failed.Load(), CPUNanos: int64(cpuTime() - markCPU)})
			fmt.Println(string(b))
		}
	}
	return nil
}

// dial connects to addr, retrying a moment while the listen queue is full.
func dial(addr string) (net.Conn, error) {
	var err error
	for range 50 {
		var conn net.Conn
		if conn, err = net.Dial("tcp", addr); err == nil {
			return conn, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, err
}

// follow asks conn for turn's stream in proto (servekit.NewRequest) and
// reads it line by line until it ends: caughtUp is called after the data
// lines that come before the first delta (servekit.Opening), and each later
// line delivering a delta (servekit.Delta) is a delivery, its latency now
// minus the delta's text. The body is chunked: the chunk-size lines are
// skipped as lines that are not data (each chunk holds whole frames, in
// every mode).
func (cl *client) follow(conn net.Conn, base, proto string, turn int, caughtUp func()) {
	defer conn.Close()
	before, seen := servekit.Opening(proto), 0
	defer func() {
		if seen < before {
			caughtUp()
		}
	}()
	req, err := servekit.NewRequest(context.Background(), proto, base, key(turn))
	if err != nil || req.Write(conn) != nil {
		cl.failed.Add(1)
		return
	}
	r := bufio.NewReaderSize(conn, 4096)
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			cl.failed.Add(1)
			return
		}
		if seen < before {
			if bytes.HasPrefix(line, dataPrefix) {
				if seen++; seen == before {
					caughtUp()
				}
			}
			continue
		}
		text, ok := servekit.Delta(proto, line)
		if !ok || !cl.measuring.Load() {
			continue
		}
		at, err := strconv.ParseInt(string(text), 10, 64)
		if err != nil {
			continue
		}
		cl.latency.record(time.Duration(time.Now().UnixNano() - at))
	}
}

// dataPrefix begins an SSE data line.
var dataPrefix = []byte("data:")
