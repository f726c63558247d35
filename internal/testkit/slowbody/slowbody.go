// Package slowbody has the request bodies the tests of the module's
// state-changing endpoints send to show what a handler reads and when: a
// body that never comes, and a body that stalls one byte short of its
// length (docs/contract.md section 12.6). The package is for tests only.
package slowbody

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Never is a request body that never comes: Read records that it was
// called and blocks until Close. A handler that answers a request with
// Never as its body has answered it without reading it when WasRead
// reports false.
type Never struct {
	read   atomic.Bool
	closed chan struct{}
	once   sync.Once
}

// NewNever returns a Never, closed when t ends.
func NewNever(t testing.TB) *Never {
	b := &Never{closed: make(chan struct{})}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// Read records the call and blocks until Close, then reports
// [io.ErrUnexpectedEOF].
func (b *Never) Read([]byte) (int, error) {
	b.read.Store(true)
	<-b.closed
	return 0, io.ErrUnexpectedEOF
}

// Close ends every Read.
func (b *Never) Close() error {
	b.once.Do(func() { close(b.closed) })
	return nil
}

// WasRead reports whether Read was called.
func (b *Never) WasRead() bool { return b.read.Load() }

// Answer serves req with h on a recorder and returns it once h returns,
// which must be within 10 s: a handler that waits for a [Never] body
// fails t (and the body is closed, so that it returns).
func Answer(t testing.TB, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.ServeHTTP(rec, req)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = req.Body.Close()
		<-done
		t.Fatalf("%s %s: no answer within 10 s: the handler waits for the body", req.Method, req.URL)
	}
	return rec
}

// Stall sends, over a new HTTP/1.1 connection to addr, a POST of target
// with header (CRLF-ended lines) whose Content-Length is one byte more
// than body, then nothing, and returns the response, which must come
// within 10 s; the connection is closed when t ends.
func Stall(t testing.TB, addr, target, header, body string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	req := "POST " + target + " HTTP/1.1\r\nHost: test\r\n" + header +
		"Content-Length: " + strconv.Itoa(len(body)+1) + "\r\n\r\n" + body
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	return resp
}
