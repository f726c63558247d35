package reqbody_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/reqbody"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/internal/testkit/slowbody"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// countingBody is a request body that counts the bytes read from it.
type countingBody struct {
	r    io.Reader
	read atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.read.Add(int64(n))
	return n, err
}

func (b *countingBody) Close() error { return nil }

func TestReadWithinTheLimit(t *testing.T) {
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("0123456789"))
	body, err := reqbody.Read(httptest.NewRecorder(), req, reqbody.Limits{MaxBytes: 10})
	require.NoError(t, err, "a recorder sets no deadline, and reads all the same")
	assert.Equal(t, "0123456789", string(body))

	req = httptest.NewRequest(http.MethodPost, "/", http.NoBody)
	body, err = reqbody.Read(httptest.NewRecorder(), req, reqbody.Limits{})
	require.NoError(t, err)
	assert.Empty(t, body)
}

// TestABodyOverTheLimitIsReadNoFurther: a Content-Length over the limit is
// refused before a byte is read; a body of unknown length, once one byte
// past the limit is read.
func TestABodyOverTheLimitIsReadNoFurther(t *testing.T) {
	declared := &countingBody{r: strings.NewReader(strings.Repeat("x", 100))}
	req := httptest.NewRequest(http.MethodPost, "/", declared)
	req.ContentLength = 100
	_, err := reqbody.Read(httptest.NewRecorder(), req, reqbody.Limits{MaxBytes: 10})
	require.ErrorIs(t, err, refusal.ErrFrameTooLarge)
	assert.Zero(t, declared.read.Load(), "a declared length over the limit reads nothing")

	unknown := &countingBody{r: strings.NewReader(strings.Repeat("x", 1000))}
	req = httptest.NewRequest(http.MethodPost, "/", unknown)
	req.ContentLength = -1
	_, err = reqbody.Read(httptest.NewRecorder(), req, reqbody.Limits{MaxBytes: 10})
	require.ErrorIs(t, err, refusal.ErrFrameTooLarge)
	assert.Equal(t, int64(11), unknown.read.Load(), "the limit and one byte more")

	req = httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat("x", reqbody.DefaultMaxBytes+1)))
	req.ContentLength = -1
	_, err = reqbody.Read(httptest.NewRecorder(), req, reqbody.Limits{})
	require.ErrorIs(t, err, refusal.ErrFrameTooLarge, "0 means the default limit")
}

// readServer serves a handler that reads the body within lim and answers
// its refusal's status, or 200 with the body; each error is sent on errs.
func readServer(t *testing.T, http2 bool, lim reqbody.Limits, errs chan<- error) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := reqbody.Read(w, r, lim)
		errs <- err
		if err != nil {
			http.Error(w, string(refusal.CodeOf(err)), refusal.HTTPStatus(refusal.CodeOf(err)))
			return
		}
		_, _ = w.Write(body)
	}))
	srv.EnableHTTP2 = http2
	if http2 {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// TestASlowBodyIsCutByTheDeadline: a body that stalls one byte short of
// its length is unreadable-body once the deadline passes, over HTTP/1.1
// and HTTP/2, and the answer reaches the client.
func TestASlowBodyIsCutByTheDeadline(t *testing.T) {
	lim := reqbody.Limits{Timeout: 100 * time.Millisecond}
	t.Run("HTTP/1.1", func(t *testing.T) {
		errs := make(chan error, 1)
		srv := readServer(t, false, lim, errs)
		resp := slowbody.Stall(t, srv.Listener.Addr().String(), "/", "Content-Type: application/json\r\n", "012345678")
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		err := <-errs
		require.ErrorIs(t, err, refusal.ErrUnreadableBody)
		assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	})
	t.Run("HTTP/2", func(t *testing.T) {
		errs := make(chan error, 1)
		srv := readServer(t, true, lim, errs)
		pr, pw := io.Pipe()
		defer pw.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, pr)
		require.NoError(t, err)
		req.ContentLength = 10
		go func() { _, _ = io.WriteString(pw, "012345678") }() // then nothing
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, 2, resp.ProtoMajor)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		err = <-errs
		require.ErrorIs(t, err, refusal.ErrUnreadableBody)
		assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	})
}

// TestTheDeadlineEndsWithTheRead: once the body is read, the connection
// has no read deadline: a handler that goes on past it (a stream) keeps
// its request's context, which net/http cancels when a read of the
// connection fails.
func TestTheDeadlineEndsWithTheRead(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		done := make(chan error, 1)
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, err := reqbody.Read(w, r, reqbody.Limits{Timeout: 20 * time.Millisecond})
			if err == nil {
				select {
				case <-r.Context().Done():
					err = errors.New("the request's context ended after the read")
				case <-time.After(200 * time.Millisecond): // ten deadlines later
				}
			}
			done <- err
			w.WriteHeader(http.StatusNoContent)
		}))
		srv.EnableHTTP2 = h2
		if h2 {
			srv.StartTLS()
		} else {
			srv.Start()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"id":"a"}`))
		require.NoError(t, err)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusNoContent, resp.StatusCode)
		assert.NoError(t, <-done, "HTTP/2: %v", h2)
		cancel()
		srv.Close()
	}
}
