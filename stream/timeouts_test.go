package stream_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// TestServerTimeoutsLeaveStreamsAlone: a server's ReadHeaderTimeout,
// ReadTimeout and IdleTimeout bound reading a request and an idle
// connection, never a stream (docs/contract.md section 14.6): net/http
// clears the connection's read deadline once the request is read (over
// HTTP/1.1, when its body ends; over HTTP/2 the deadline is the stream's
// body's), a parked stream's connection is read by no one, and a
// connection with a stream is not idle. A stream idle for many times each
// timeout, with no heartbeat written, gets its frames on its one request.
func TestServerTimeoutsLeaveStreamsAlone(t *testing.T) {
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			w := newWindow()
			envs := script(keyT1, 3, 10)
			appendAll(t, w, keyT1, envs[:2])
			var requests atomic.Int32
			o := m.opts
			o.HeartbeatInterval = time.Hour // nothing is written while the turn is idle
			o.Authorize = func(r *http.Request, key replay.Key) error {
				requests.Add(1)
				return authorize(r, key)
			}
			const timeout = 30 * time.Millisecond
			srv := m.start(t, mux(newHandler(t, w, &o)), func(s *http.Server) {
				s.ReadHeaderTimeout, s.ReadTimeout, s.IdleTimeout = timeout, timeout, timeout
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			state, err := stream.Follow(ctx, srv.URL+path(keyT1), &stream.FollowOptions{Client: srv.Client(),
				OnEnvelope: func(env *chatprotocol.ChatEventEnvelope) error {
					if env.Seq == 2 {
						time.AfterFunc(10*timeout, func() { appendAll(t, w, keyT1, envs[2:]) })
					}
					return nil
				}})
			require.NoError(t, err)
			assert.Equal(t, wantState(t, envs), stateJSON(t, state))
			assert.Equal(t, int32(1), requests.Load(), "the stream was cut and resumed")
		})
	}
}
