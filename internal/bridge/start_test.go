package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/internal/bridge"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/internal/testkit/slowbody"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// starter is a bridge's POST over bridge.Start: the caller from X-User, the
// body {"id"} read within 64 bytes and the body timeout, and started
// counts the turns started.
type starter struct {
	engine  *serve.Engine
	timeout time.Duration
	started atomic.Int32
}

func newStarter(t *testing.T, bodyTimeout time.Duration) *starter {
	e, err := serve.NewEngine(replay.NewMemory(nil), nil)
	require.NoError(t, err)
	return &starter{engine: e, timeout: bodyTimeout}
}

func (s *starter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a := bridge.Answers{Caller: func(r *http.Request) (interactions.Caller, error) {
		if u := r.Header.Get("X-User"); u != "" {
			return interactions.Caller{Principal: u}, nil
		}
		return interactions.Caller{}, errors.New("no session")
	}}
	parse := func(body []byte) (string, error) {
		var in struct{ ID string }
		err := json.Unmarshal(body, &in)
		return in.ID, err
	}
	_, _, ok := bridge.Start(s.engine, w, r, serve.BodyLimits{MaxBodyBytes: 64, BodyTimeout: s.timeout}, a.Authenticate, parse, func(string) bool { return true },
		func(context.Context, string) (replay.Key, error) {
			s.started.Add(1)
			return replay.Key{ConversationID: "c", TurnID: "t"}, nil
		})
	if ok {
		w.WriteHeader(http.StatusNoContent)
	}
}

// codeOf is the code of a refusal's JSON body.
func codeOf(t *testing.T, body []byte) refusal.Code {
	t.Helper()
	var b struct{ Code refusal.Code }
	require.NoError(t, json.Unmarshal(body, &b), "%s", body)
	return b.Code
}

// TestStartReadsNoBodyBeforeItsChecks: a POST without a session is 401
// unauthenticated, and one a cross-site page could send is 415
// unsupported-media-type, without a byte of its body read: a body that
// never comes still gets its answer, and no turn starts.
func TestStartReadsNoBodyBeforeItsChecks(t *testing.T) {
	s := newStarter(t, 0)
	for _, c := range []struct {
		user, ctype string
		status      int
		code        refusal.Code
	}{
		{"", "application/json", http.StatusUnauthorized, refusal.CodeUnauthenticated},
		{"", "text/plain", http.StatusUnauthorized, refusal.CodeUnauthenticated},
		{"alice", "", http.StatusUnsupportedMediaType, refusal.CodeUnsupportedMediaType},
		{"alice", "text/plain", http.StatusUnsupportedMediaType, refusal.CodeUnsupportedMediaType},
		{"alice", "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType, refusal.CodeUnsupportedMediaType},
		{"alice", "multipart/form-data; boundary=x", http.StatusUnsupportedMediaType, refusal.CodeUnsupportedMediaType},
	} {
		body := slowbody.NewNever(t)
		req := httptest.NewRequest(http.MethodPost, "/", body)
		if c.user != "" {
			req.Header.Set("X-User", c.user)
		}
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		rec := slowbody.Answer(t, s, req)
		assert.Equal(t, c.status, rec.Code, "%+v", c)
		assert.Equal(t, c.code, codeOf(t, rec.Body.Bytes()), "%+v", c)
		assert.False(t, body.WasRead(), "%+v: the body was read", c)
	}
	assert.Zero(t, s.started.Load())
}

// TestStartBoundsTheBody: a body over the limit is 413 frame-too-large,
// and one that stalls one byte short of its length is cut by the body
// timeout, 400 invalid-input; neither starts a turn.
func TestStartBoundsTheBody(t *testing.T) {
	s := newStarter(t, 100*time.Millisecond)
	srv := httptest.NewServer(s)
	defer srv.Close()

	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"id":"`+strings.Repeat("x", 64)+`"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-User", "alice")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Equal(t, refusal.CodeFrameTooLarge, codeOf(t, body))

	resp = slowbody.Stall(t, srv.Listener.Addr().String(), "/", "X-User: alice\r\nContent-Type: application/json\r\n", `{"id":"a"`)
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, refusal.CodeInvalidInput, codeOf(t, body))
	assert.Zero(t, s.started.Load())
}

// TestAPostedStreamOutlivesTheServerTimeouts: a bridge's POST, its body
// read under its own deadline, streams its turn on past the server's
// ReadHeaderTimeout, ReadTimeout and IdleTimeout many times over, over
// HTTP/1.1 and HTTP/2 (docs/contract.md section 14.6): the deadlines bound
// reading the request only.
func TestAPostedStreamOutlivesTheServerTimeouts(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		w := replay.NewMemory(nil)
		key := replay.Key{ConversationID: "c", TurnID: "t"}
		envs := turnscript.Envelopes(key, turnscript.Events(key, false))
		_, err := w.Append(context.Background(), key, envs[0])
		require.NoError(t, err)
		s, err := serve.NewEngine(w, &serve.Options{HeartbeatInterval: -1})
		require.NoError(t, err)
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			_, _, ok := bridge.Start(s, rw, r, serve.BodyLimits{BodyTimeout: 100 * time.Millisecond}, nil, func(b []byte) ([]byte, error) { return b, nil },
				func([]byte) bool { return true }, func(context.Context, []byte) (replay.Key, error) { return key, nil })
			if ok {
				s.Serve(rw, r, &serve.Stream{Key: key, NewCodec: func() serve.Codec { return &seqs{} },
					Prologue: []byte("data: start\n\n"), Epilogue: []byte("data: end\n\n")})
			}
		}))
		// Long enough for a TLS handshake on a loaded machine (the server's
		// handshake deadline is the least of these timeouts).
		const timeout = 100 * time.Millisecond
		srv.Config.ReadHeaderTimeout, srv.Config.ReadTimeout, srv.Config.IdleTimeout = timeout, timeout, timeout
		srv.EnableHTTP2 = h2
		if h2 {
			srv.StartTLS()
		} else {
			srv.Start()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(`{"id":"c"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		time.AfterFunc(10*timeout, func() {
			for _, env := range envs[1:] {
				_, err := w.Append(context.Background(), key, env)
				assert.NoError(t, err)
			}
		})
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err, "HTTP/2: %v: the stream was cut after %q", h2, b)
		assert.Equal(t, h2, resp.ProtoMajor == 2)
		assert.Equal(t, want(len(envs)), string(b), "HTTP/2: %v", h2)
		cancel()
		srv.Close()
	}
}

// seqs is a Codec that writes each frame's seq and is done at the turn's
// terminal lifecycle.
type seqs struct{ done bool }

func (c *seqs) Maps(string) bool { return true }
func (c *seqs) Done() bool       { return c.done }
func (c *seqs) Append(dst []byte, f replay.Frame, env chatprotocol.ChatEventEnvelope) ([]byte, error) {
	if l, ok := env.Event.(*chatprotocol.LifecycleEvent); ok && l.Status != chatprotocol.LifecycleStarted {
		c.done = true
	}
	return fmt.Appendf(dst, "data: %d\n\n", f.Seq), nil
}

// want is what a stream of n frames through seqs reads whole.
func want(n int) string {
	var b strings.Builder
	b.WriteString("data: start\n\n")
	for i := range n {
		fmt.Fprintf(&b, "data: %d\n\n", i+1)
	}
	b.WriteString("data: end\n\n")
	return b.String()
}
