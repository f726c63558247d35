package serve_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// goneServer serves key's turn through e with a Gone that counts its calls
// and signals each on gone.
func goneServer(t *testing.T, e *serve.Engine, key replay.Key, calls *atomic.Int64, gone chan<- struct{}) *httptest.Server {
	t.Helper()
	var codecCalls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.Serve(w, r, &serve.Stream{Key: key, NewCodec: func() serve.Codec { return &counting{calls: &codecCalls} },
			Prologue: []byte("data: start\n\n"), Epilogue: []byte("data: end\n\n"),
			Gone: func() { calls.Add(1); gone <- struct{}{} }})
	}))
	t.Cleanup(srv.Close)
	shutdownFirst(t, e)
	return srv
}

// A stream with Gone whose client goes away while it waits for the turn's
// next frame calls Gone once, on its own: the stream was not parked, so it
// learns of the leaving at once, not at a heartbeat's write (the interval
// here is an hour). A stream read to its end, and one the Engine's Close
// ends, never call it.
func TestGoneIsCalledWhenTheClientLeavesOnly(t *testing.T) {
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	w, rest := started(t, key)
	e := engine(t, w, &serve.Options{HeartbeatInterval: time.Hour})
	var calls atomic.Int64
	gone := make(chan struct{}, 4)
	srv := goneServer(t, e, key, &calls, gone)

	ctx, leave := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "data: start\n", line)
	leave()
	resp.Body.Close()
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("Gone was not called after the client left")
	}

	appendRest(t, w, key, rest)
	resp, err = http.Get(srv.URL)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, want(len(rest)+1), string(b))
	assert.Equal(t, int64(1), calls.Load(), "a stream read to its end called Gone")
}

// The Engine's Close aborts a stream with Gone without calling it: the
// client is still there.
func TestCloseIsNotGone(t *testing.T) {
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	w, _ := started(t, key)
	e := engine(t, w, &serve.Options{HeartbeatInterval: time.Hour})
	var calls atomic.Int64
	srv := goneServer(t, e, key, &calls, make(chan struct{}, 4))
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "data: start\n", line)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, e.Shutdown(ctx))
	assert.Zero(t, calls.Load())
}
