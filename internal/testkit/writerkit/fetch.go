package writerkit

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/realclient"
)

// FetchScript is the Node script of the harness that reads a body with
// Node's own fetch, in internal/testkit/eventsource; it needs no npm
// package.
const FetchScript = "fetch-body.mjs"

// Node returns the node binary, or skips t when there is none (fails it
// when [realclient.RequiredEnv] is set).
func Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		realclient.Missing(t, "node", err)
	}
	return node
}

// FetchOpen is the script's line once the response's headers arrived.
type FetchOpen struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"` // names in lower case
}

// FetchError is an error as the script describes it: a read's rejection
// (undici's TypeError "terminated"), with its cause (a SocketError of code
// UND_ERR_SOCKET).
type FetchError struct {
	Name    string      `json:"name"`
	Code    string      `json:"code"`
	Message string      `json:"message"`
	Cause   *FetchError `json:"cause"`
}

func (e *FetchError) String() string {
	if e == nil {
		return "none"
	}
	s := fmt.Sprintf("%s(code %q): %s", e.Name, e.Code, e.Message)
	if e.Cause != nil {
		s += "; cause " + e.Cause.String()
	}
	return s
}

// FetchEnd is the script's last line: how reading the body ended.
type FetchEnd struct {
	Bytes   int64       `json:"bytes"`
	Clean   bool        `json:"clean"`
	Timeout bool        `json:"timeout"`
	Error   *FetchError `json:"error"`
}

// fetchLine is one line of the script's stdout: one member set.
type fetchLine struct {
	Open   *FetchOpen `json:"open"`
	Signal *struct {
		Bytes int64 `json:"bytes"`
	} `json:"signal"`
	End *FetchEnd `json:"end"`
}

// Fetch is one run of [FetchScript], killed when t ends.
type Fetch struct {
	lines chan fetchLine // closed when stdout ends; the script prints 3 lines at most
	what  string
}

// StartFetch runs [FetchScript] with node on s's request to the server at
// base; with signal set, the script reports when the body holds it.
func StartFetch(t testing.TB, node string, s Subject, base, signal string) *Fetch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*ClientTimeout)
	args := []string{FetchScript, "--url", base + s.Request.Path, "--method", s.Request.Method,
		"--timeout-ms", strconv.FormatInt(ClientTimeout.Milliseconds(), 10)}
	if s.Request.Body != "" {
		args = append(args, "--body", s.Request.Body)
	}
	if s.Request.ContentType != "" {
		args = append(args, "--content-type", s.Request.ContentType)
	}
	if signal != "" {
		args = append(args, "--signal", signal)
	}
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = realclient.HarnessDir(t)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatalf("writerkit: node's stdout: %v", err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("writerkit: starting node %s: %v", FetchScript, err)
	}
	f := &Fetch{lines: make(chan fetchLine, 16), what: "node fetch of " + s.Request.Method + " " + s.Request.Path}
	go func() {
		defer close(f.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var l fetchLine
			if json.Unmarshal(sc.Bytes(), &l) != nil {
				l.End = &FetchEnd{Error: &FetchError{Name: "unreadable line", Message: sc.Text()}}
			}
			f.lines <- l
		}
	}()
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	return f
}

// next returns the script's next line, or fails t when none comes
// within d.
func (f *Fetch) next(t testing.TB, d time.Duration, waiting string) fetchLine {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case l, ok := <-f.lines:
		if ok {
			return l
		}
		t.Fatalf("%s: the script exited before %s", f.what, waiting)
	case <-timer.C:
		t.Fatalf("%s: no %s", f.what, waiting)
	}
	return fetchLine{}
}

// Open waits for the response's headers, at most d.
func (f *Fetch) Open(t testing.TB, d time.Duration) FetchOpen {
	t.Helper()
	l := f.next(t, d, fmt.Sprintf("response (waited %v)", d))
	if l.Open == nil {
		t.Fatalf("%s: no response: %+v", f.what, l.End)
	}
	return *l.Open
}

// Signal waits until the body read holds the run's signal, at most d.
func (f *Fetch) Signal(t testing.TB, d time.Duration) {
	t.Helper()
	l := f.next(t, d, fmt.Sprintf("signal in the body (waited %v)", d))
	if l.Signal == nil {
		t.Fatalf("%s: the body ended before the signal: %+v", f.what, l.End)
	}
}

// End waits for the end of the body, at most d.
func (f *Fetch) End(t testing.TB, d time.Duration) FetchEnd {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		l := f.next(t, max(time.Until(deadline), 0), fmt.Sprintf("end of the body (waited %v)", d))
		if l.End != nil {
			return *l.End
		}
	}
}
