package stream_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// pattern is the route every test mounts the handler on: without a
// method, as the package documentation mounts it.
const pattern = "/conversations/{conversation}/turns/{turn}/events"

var keyT1 = replay.Key{ConversationID: "c-1", TurnID: "t-1"}

// path returns the URL path of key's stream.
func path(key replay.Key) string {
	return "/conversations/" + key.ConversationID + "/turns/" + key.TurnID + "/events"
}

// envelope returns the envelope of seq in key's turn.
func envelope(key replay.Key, seq int64, ev chatprotocol.Event) *chatprotocol.ChatEventEnvelope {
	return &chatprotocol.ChatEventEnvelope{ConversationID: key.ConversationID, TurnID: key.TurnID,
		EventID: "e-" + strconv.FormatInt(seq, 10), Seq: seq, Event: ev}
}

// script returns a whole turn: started, deltas deltas of text of size
// bytes each, completed.
func script(key replay.Key, deltas, size int) []*chatprotocol.ChatEventEnvelope {
	text := make([]byte, size)
	for i := range text {
		text[i] = 'a' + byte(i%26)
	}
	envs := []*chatprotocol.ChatEventEnvelope{envelope(key, 1, &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted})}
	for i := range deltas {
		envs = append(envs, envelope(key, int64(i+2), &chatprotocol.DeltaEvent{Text: strconv.Itoa(i) + string(text)}))
	}
	return append(envs, envelope(key, int64(deltas+2), &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}))
}

// appendAll appends envs to key's turn of w.
func appendAll(t testing.TB, w replay.Window, key replay.Key, envs []*chatprotocol.ChatEventEnvelope) {
	t.Helper()
	for _, env := range envs {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
}

// wantState is the state the envelopes add up to, as JSON.
func wantState(t testing.TB, envs []*chatprotocol.ChatEventEnvelope) string {
	t.Helper()
	s := &chatprotocol.ChatStateV1{}
	for _, env := range envs {
		require.NoError(t, s.Apply(*env))
	}
	return stateJSON(t, s)
}

func stateJSON(t testing.TB, s *chatprotocol.ChatStateV1) string {
	t.Helper()
	b, err := s.MarshalJSON()
	require.NoError(t, err)
	return string(b)
}

// errStoreDown is what the test hook returns for conversation "down".
var errStoreDown = errors.New("authorization store is down")

// authorize is the tests' hook: conversation c-1 and c-2 exist and
// belong to everyone but mallory; conversation "down" cannot be decided.
func authorize(r *http.Request, key replay.Key) error {
	switch {
	case key.ConversationID == "down":
		return errStoreDown
	case r.Header.Get("X-User") == "mallory":
		return refusal.ErrUnauthorized
	case key.ConversationID == "c-1" || key.ConversationID == "c-2":
		return nil
	}
	return refusal.ErrUnauthorized
}

// newHandler returns a handler on w with the tests' hook and opts.
func newHandler(t testing.TB, w replay.Window, opts *stream.HandlerOptions) *stream.Handler {
	t.Helper()
	o := stream.HandlerOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Authorize == nil {
		o.Authorize = authorize
	}
	h, err := stream.NewHandler(w, &o)
	require.NoError(t, err)
	return h
}

// mux mounts h on pattern.
func mux(h http.Handler) *http.ServeMux {
	m := http.NewServeMux()
	m.Handle(pattern, h)
	return m
}

// newServer serves h on a loopback test server.
func newServer(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(mux(h))
	t.Cleanup(srv.Close)
	return srv
}

func newWindow() *replay.Memory { return replay.NewMemory(nil) }
