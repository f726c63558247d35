package serve_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// connServer serves the version-1 stream of key's turn of w at /stream
// through e, and echoes a request's method, path and body at /echo, on a
// loopback HTTP/1.1 server; tls serves it over TLS.
func connServer(t *testing.T, e *serve.Engine, key replay.Key, overTLS bool) *httptest.Server {
	t.Helper()
	m := http.NewServeMux()
	m.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		e.Serve(w, r, &serve.Stream{Key: key})
	})
	m.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		tlsOn := "plain"
		if r.TLS != nil {
			tlsOn = "tls"
		}
		io.WriteString(w, r.Method+" "+r.URL.Path+" "+tlsOn+" "+string(b))
	})
	srv := httptest.NewUnstartedServer(m)
	if overTLS {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	shutdownFirst(t, e)
	return srv
}

// started returns a window holding key's turn started, and the rest of
// its envelopes.
func started(t *testing.T, key replay.Key) (*replay.Memory, []*chatprotocol.ChatEventEnvelope) {
	t.Helper()
	w := replay.NewMemory(nil)
	envs := turnscript.Envelopes(key, turnscript.Events(key, false))
	_, err := w.Append(context.Background(), key, envs[0])
	require.NoError(t, err)
	return w, envs[1:]
}

func appendRest(t *testing.T, w *replay.Memory, key replay.Key, envs []*chatprotocol.ChatEventEnvelope) {
	t.Helper()
	for _, env := range envs {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
}

// readResponse reads one response to a request of method from br, its
// body whole.
func readResponse(t *testing.T, br *bufio.Reader, method string) (*http.Response, string, error) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		return nil, "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), err
}

// TestAPipelinedRequestIsNeverLost: a client that pipelines its next
// request behind a stream's gets that request answered, or the connection
// closed after the stream's clean end (so that it retries it), never a
// connection that lost the request's first bytes.
func TestAPipelinedRequestIsNeverLost(t *testing.T) {
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	w, rest := started(t, key)
	srv := connServer(t, engine(t, w, nil), key, false)
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(conn, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\nPOST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond) // caught up: parked
	appendRest(t, w, key, rest)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err, "a clean end")
	assert.Equal(t, len(rest)+1, strings.Count(string(b), "\nid: "))
	if _, err := br.Peek(1); err != nil {
		assert.ErrorIs(t, err, io.EOF, "closed after the stream, never a broken request")
		return
	}
	next, body, err := readResponse(t, br, http.MethodPost)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, next.StatusCode, body)
	assert.Equal(t, "POST /echo plain hello", body)
}

// TestAConnectionTheServerWouldCloseIsClosed: a parked stream that ends
// cleanly gives its connection back only when the server would have kept
// it: never when the client asked to close it, nor when the rest of a body
// nothing read is still on it, which the server would read as a request.
func TestAConnectionTheServerWouldCloseIsClosed(t *testing.T) {
	for _, c := range []struct{ name, request string }{
		{"Connection: close", "GET /stream HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"},
		{"an unread body", "GET /stream HTTP/1.1\r\nHost: x\r\nContent-Length: 300000\r\n\r\n" +
			strings.Repeat("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n", 300000/34) + strings.Repeat("\n", 300000%34)},
	} {
		t.Run(c.name, func(t *testing.T) {
			key := replay.Key{ConversationID: "c", TurnID: "t"}
			w, rest := started(t, key)
			srv := connServer(t, engine(t, w, nil), key, false)
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
			go io.WriteString(conn, c.request) // the server does not read all of it
			br := bufio.NewReader(conn)
			resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
			require.NoError(t, err)
			assert.True(t, resp.Close, "the server said it closes the connection")
			time.Sleep(50 * time.Millisecond) // caught up: parked
			appendRest(t, w, key, rest)
			_, err = io.ReadAll(resp.Body)
			require.NoError(t, err, "a clean end")
			require.NoError(t, conn.SetDeadline(time.Now().Add(2*time.Second)))
			next, body, err := readResponse(t, br, http.MethodGet)
			if !assert.Error(t, err, "the connection was given back") {
				t.Logf("served: %d %q", next.StatusCode, body)
				return
			}
			assert.NotErrorIs(t, err, os.ErrDeadlineExceeded, "the connection was given back")
		})
	}
}

// TestAConnectionOverTLSIsGivenBack: over TLS (HTTP/1.1), a parked stream
// that ends cleanly gives the connection back, and the next request on it
// is served as one over TLS.
func TestAConnectionOverTLSIsGivenBack(t *testing.T) {
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	w, rest := started(t, key)
	srv := connServer(t, engine(t, w, nil), key, true)
	conn, err := tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"http/1.1"}})
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(conn, "GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond)
	appendRest(t, w, key, rest)
	_, err = io.ReadAll(resp.Body)
	require.NoError(t, err, "a clean end")
	_, err = io.WriteString(conn, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
	require.NoError(t, err)
	next, body, err := readResponse(t, br, http.MethodPost)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, next.StatusCode)
	assert.Equal(t, "POST /echo tls hello", body)
}

// TestShutdownReturnsOnceGivenBackConnectionsAreTheServers: once
// Engine.Shutdown returned, every connection a stream gave back is the
// server's (its ConnState hook saw it new), so that a host that then
// closes the server, counting its connections by that hook, cannot miss
// one; the server's BaseContext and ConnContext apply to it as to one it
// accepted.
func TestShutdownReturnsOnceGivenBackConnectionsAreTheServers(t *testing.T) {
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	w, rest := started(t, key)
	e := engine(t, w, nil)
	type ctxKey struct{}
	var mu sync.Mutex
	var news, bases int
	m := http.NewServeMux()
	m.HandleFunc("/stream", func(rw http.ResponseWriter, r *http.Request) {
		e.Serve(rw, r, &serve.Stream{Key: key})
	})
	m.HandleFunc("/echo", func(rw http.ResponseWriter, r *http.Request) {
		io.WriteString(rw, r.Context().Value(ctxKey{}).(string))
	})
	srv := httptest.NewUnstartedServer(m)
	givingBack, goOn := make(chan struct{}), make(chan struct{})
	srv.Config.BaseContext = func(net.Listener) context.Context {
		mu.Lock()
		bases++
		again := bases == 2
		mu.Unlock()
		if again { // the connection given back: a host's hook that takes its time
			close(givingBack)
			<-goOn
		}
		return context.Background()
	}
	srv.Config.ConnContext = func(ctx context.Context, _ net.Conn) context.Context {
		return context.WithValue(ctx, ctxKey{}, "conn")
	}
	hijacked := make(chan struct{})
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			mu.Lock()
			news++
			mu.Unlock()
		case http.StateHijacked:
			close(hijacked)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Get(srv.URL + "/stream")
	require.NoError(t, err)
	waitFor(t, hijacked) // caught up: parked
	appendRest(t, w, key, rest)
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err, "a clean end")
	waitFor(t, givingBack)
	shutdown := make(chan int)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		assert.NoError(t, e.Shutdown(ctx))
		mu.Lock()
		defer mu.Unlock()
		shutdown <- news
	}()
	time.Sleep(50 * time.Millisecond) // time for a Shutdown that would not wait to return
	close(goOn)
	select {
	case n := <-shutdown:
		assert.Equal(t, 2, n, "the connection given back is the server's")
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not return")
	}
	next, err := srv.Client().Get(srv.URL + "/echo")
	require.NoError(t, err)
	b, err := io.ReadAll(next.Body)
	next.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "conn", string(b))
}

// waitFor waits until ch is closed, 5 seconds at most.
func waitFor(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("timed out")
	}
}

// hijacking is a middleware's wrapper that offers Hijack, delegating it,
// and Unwrap, as a logging or tracing middleware's does.
type hijacking struct {
	http.ResponseWriter
	hijacked *atomic.Bool
}

func (h hijacking) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h.hijacked.Store(true)
	return http.NewResponseController(h.ResponseWriter).Hijack()
}

func (h hijacking) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// TestAStreamGivesItsConnectionBack: a stream behind a wrapper that offers
// Hijack by delegating it parks through it, and a stream posted with a body
// its handler read parks too, also behind http.MaxBytesHandler or sent
// chunked; each ends
// cleanly and the client's next request, a POST, goes through on its
// connection.
func TestAStreamGivesItsConnectionBack(t *testing.T) {
	for _, c := range []struct {
		name          string
		posted, bound bool
		chunked       bool
	}{{"a wrapper's GET", false, false, false}, {"a POST", true, false, false},
		{"a POST behind MaxBytesHandler", true, true, false}, {"a chunked POST", true, false, true}} {
		posted := c.posted
		t.Run(c.name, func(t *testing.T) {
			key := replay.Key{ConversationID: "c", TurnID: "t"}
			w, rest := started(t, key)
			e := engine(t, w, nil)
			var hijacked atomic.Bool
			m := http.NewServeMux()
			var h http.Handler = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
				if posted {
					b, err := io.ReadAll(r.Body)
					assert.NoError(t, err)
					assert.Equal(t, `{"run":1}`, string(b))
				} else {
					rw = hijacking{rw, &hijacked}
				}
				e.Serve(rw, r, &serve.Stream{Key: key})
			})
			if c.bound {
				h = http.MaxBytesHandler(h, 1<<20)
			}
			m.Handle("/stream", h)
			m.HandleFunc("POST /echo", func(rw http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				rw.Write(b)
			})
			srv := httptest.NewServer(m)
			t.Cleanup(srv.Close)
			shutdownFirst(t, e)
			var conns atomic.Int32
			trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
				if !info.Reused {
					conns.Add(1)
				}
			}}
			ctx := httptrace.WithClientTrace(context.Background(), trace)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/stream", nil)
			if posted {
				var body io.Reader = strings.NewReader(`{"run":1}`)
				if c.chunked {
					body = io.MultiReader(body) // of unknown length: sent chunked
				}
				req, err = http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/stream", body)
			}
			require.NoError(t, err)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			time.Sleep(50 * time.Millisecond) // caught up: parked
			appendRest(t, w, key, rest)
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.NoError(t, err, "a clean end")
			assert.Equal(t, len(rest)+1, strings.Count(string(b), "\nid: "))
			assert.Equal(t, !posted, hijacked.Load(), "parked through the wrapper")
			req, err = http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/echo", strings.NewReader("after"))
			require.NoError(t, err)
			next, err := srv.Client().Do(req)
			require.NoError(t, err)
			b, err = io.ReadAll(next.Body)
			next.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, "after", string(b))
			assert.Equal(t, int32(1), conns.Load(), "one connection")
		})
	}
}

// TestAStreamIsChunkedWhateverItsHeaders: a Stream's Header naming a
// framing of its own (Transfer-Encoding: identity) does not change the
// framing a parked stream writes in.
func TestAStreamIsChunkedWhateverItsHeaders(t *testing.T) {
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	w, rest := started(t, key)
	e := engine(t, w, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		e.Serve(rw, r, &serve.Stream{Key: key, Header: http.Header{"Transfer-Encoding": {"identity"}}})
	}))
	t.Cleanup(srv.Close)
	shutdownFirst(t, e)
	client := srv.Client()
	client.Timeout = 5 * time.Second
	resp, err := client.Get(srv.URL)
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond) // caught up: parked
	appendRest(t, w, key, rest)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, len(rest)+1, strings.Count(string(b), "\nid: "))
	assert.NotContains(t, string(b), "\r\n", "no chunk framing in the body")
}
