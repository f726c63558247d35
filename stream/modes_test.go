package stream_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/sse"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// A stream waits in one of three ways: parked (HTTP/1.1, the default), on
// its request's goroutine (WaitOnRequest), or on its request's goroutine
// because the connection cannot be taken over (HTTP/2).
type mode struct {
	name  string
	opts  stream.HandlerOptions
	http2 bool
}

var modes = []mode{
	{name: "parked"},
	{name: "on request", opts: stream.HandlerOptions{Options: serve.Options{WaitOnRequest: true}}},
	{name: "HTTP/2", http2: true},
}

// start serves h on a loopback test server in m's protocol (HTTP/2 over
// TLS, or HTTP/1.1), each configure applied to its http.Server first,
// closed when t ends.
func (m mode) start(t *testing.T, h http.Handler, configure ...func(*http.Server)) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	for _, c := range configure {
		c(srv.Config)
	}
	srv.EnableHTTP2 = m.http2
	if m.http2 {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv
}

// serveMode serves a handler on w with m's options plus opts' heartbeat,
// and returns key's URL, a client for it, and the HTTP major version of
// the last request.
func serveMode(t *testing.T, m mode, w replay.Window, heartbeat time.Duration) (string, *http.Client, *atomic.Int32) {
	t.Helper()
	var proto atomic.Int32
	o := m.opts
	o.HeartbeatInterval = heartbeat
	o.Authorize = func(r *http.Request, key replay.Key) error {
		proto.Store(int32(r.ProtoMajor))
		return authorize(r, key)
	}
	srv := m.start(t, mux(newHandler(t, w, &o)))
	return srv.URL + path(keyT1), srv.Client(), &proto
}

func TestLiveStreamInEveryMode(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			w := newWindow()
			envs := script(keyT1, 100, 10)
			appendAll(t, w, keyT1, envs[:2])
			url, client, proto := serveMode(t, m, w, 0)
			var got seqRecorder
			state, err := stream.Follow(context.Background(), url, &stream.FollowOptions{Client: client,
				OnEnvelope: func(env *chatprotocol.ChatEventEnvelope) error {
					if env.Seq == 2 {
						go appendAll(t, w, keyT1, envs[2:]) // after the replay: the rest is live
					}
					return got.on(env)
				}})
			require.NoError(t, err)
			assert.Equal(t, seqsUpTo(len(envs)), got.seqs)
			assert.Equal(t, wantState(t, envs), stateJSON(t, state))
			assert.Equal(t, map[bool]int32{true: 2, false: 1}[m.http2], proto.Load())
		})
	}
}

func TestIdleStreamSendsHeartbeats(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			w := newWindow()
			envs := script(keyT1, 1, 3)
			appendAll(t, w, keyT1, envs[:1])
			url, client, _ := serveMode(t, m, w, 10*time.Millisecond)
			resp, err := client.Get(url)
			require.NoError(t, err)
			defer resp.Body.Close()
			dec := sse.NewDecoder(resp.Body, nil)
			var types []string
			for len(types) < 5 {
				ev, err := dec.Next()
				require.NoError(t, err)
				types = append(types, map[bool]string{true: "comment", false: ev.Type}[ev.Comment])
			}
			assert.Equal(t, []string{sse.EventHeartbeat, sse.EventMessage, "comment", "comment", "comment"}, types,
				"the opening heartbeat event, the frame, then heartbeat comments while idle")
			appendAll(t, w, keyT1, envs[1:])
			var last sse.Event
			for {
				ev, err := dec.Next()
				if err != nil {
					assert.ErrorIs(t, err, io.EOF, "the stream ends after the last frame")
					break
				}
				if !ev.Comment {
					last = ev.Clone()
				}
			}
			assert.Equal(t, "3", last.LastEventID)
			assert.Equal(t, sse.EventMessage, last.Type, "no event line: an envelope's type is in its data")
			env, err := chatprotocol.ParseEnvelope(last.Data)
			require.NoError(t, err)
			assert.Equal(t, chatprotocol.EventTypeLifecycle, env.Event.EventType())
		})
	}
}

// TestNoStreamSaysConnectionClose: no stream answers Connection: close
// (a fetch-based reader reads a cut body of such a response as a clean
// end; docs/contract.md section 14.2), whether it is taken over or not, and
// the client's next request, a POST, goes through on the same connection
// once the stream ended, also when the Handler had taken it over (it gives
// the connection back to the server after the last chunk).
func TestNoStreamSaysConnectionClose(t *testing.T) {
	for _, c := range []struct {
		name  string
		opts  stream.HandlerOptions
		ended bool
	}{
		{"a running turn", stream.HandlerOptions{}, false},
		{"an ended turn", stream.HandlerOptions{}, true},
		{"WaitOnRequest", stream.HandlerOptions{Options: serve.Options{WaitOnRequest: true}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWindow()
			envs := script(keyT1, 4, 10)
			appendAll(t, w, keyT1, envs[:2])
			if c.ended {
				appendAll(t, w, keyT1, envs[2:])
			}
			m := mux(newHandler(t, w, &c.opts))
			m.HandleFunc("POST /next", func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				w.Write(b)
			})
			srv := httptest.NewServer(m)
			t.Cleanup(srv.Close)
			resp, err := srv.Client().Get(srv.URL + path(keyT1))
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.False(t, resp.Close)
			assert.Empty(t, resp.Header.Values("Connection"))
			if !c.ended {
				time.Sleep(20 * time.Millisecond) // caught up: parked, where it may be
				appendAll(t, w, keyT1, envs[2:])
			}
			rd := chatprotocol.NewEnvelopeReader(resp.Body, nil)
			for range envs {
				_, err := rd.Next()
				require.NoError(t, err)
			}
			_, err = rd.Next()
			assert.ErrorIs(t, err, io.EOF, "a clean end")
			var reused bool
			trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
			req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
				http.MethodPost, srv.URL+"/next", strings.NewReader("after"))
			require.NoError(t, err)
			next, err := srv.Client().Do(req)
			require.NoError(t, err)
			assert.True(t, reused, "the POST goes on the stream's connection, kept alive")
			b, err := io.ReadAll(next.Body)
			next.Body.Close()
			require.NoError(t, err)
			assert.Equal(t, "after", string(b))
		})
	}
}
