package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
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
		go cl.follow(conn, c.proto, i%c.turns, caught.Done)
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

var (
	dataPrefix = []byte("data: ")
	textField  = []byte(`"text":"`)  // a version-1 delta's
	deltaField = []byte(`"delta":"`) // a text-delta chunk's, a TEXT_MESSAGE_CONTENT event's
)

// request is the request of turn's stream in proto, and the data lines
// that come before its first delta: the stream's opening heartbeat and
// lifecycle started; uistream's start and start-step chunks; agui's
// RUN_STARTED.
func request(proto string, turn int) (string, int) {
	path := "/conversations/" + conversation + "/turns/" + turnID(turn) + "/events"
	switch proto {
	case "agui":
		body := `{"threadId":"` + conversation + `","runId":"` + turnID(turn) + `","messages":[]}`
		return "POST " + path + " HTTP/1.1\r\nHost: fanout\r\nAccept: text/event-stream\r\nContent-Type: application/json\r\nContent-Length: " +
			strconv.Itoa(len(body)) + "\r\n\r\n" + body, 1
	default:
		return "GET " + path + " HTTP/1.1\r\nHost: fanout\r\nAccept: text/event-stream\r\n\r\n", 2
	}
}

// follow asks conn for turn's stream in proto and reads it line by line
// until it ends: caughtUp is called after the data lines that come before
// the first delta (see request), and each later data line holding a delta
// is a delivery, its latency now minus the delta's text. The body is
// chunked: the chunk-size lines are skipped as lines that are not data
// (each chunk holds whole frames, in both modes).
func (cl *client) follow(conn net.Conn, proto string, turn int, caughtUp func()) {
	defer conn.Close()
	req, before := request(proto, turn)
	field := textField
	if proto != "stream" {
		field = deltaField
	}
	seen := 0
	defer func() {
		if seen < before {
			caughtUp()
		}
	}()
	if _, err := io.WriteString(conn, req); err != nil {
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
		if !bytes.HasPrefix(line, dataPrefix) {
			continue
		}
		if seen++; seen == before {
			caughtUp()
		}
		i := bytes.Index(line, field)
		if i < 0 || !cl.measuring.Load() {
			continue
		}
		digits := line[i+len(field):]
		if j := bytes.IndexByte(digits, '"'); j >= 0 {
			digits = digits[:j]
		}
		at, err := strconv.ParseInt(string(digits), 10, 64)
		if err != nil {
			continue
		}
		cl.latency.record(time.Duration(time.Now().UnixNano() - at))
	}
}
