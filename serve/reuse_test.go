package serve_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// texts is a Codec that writes each delta's text, done at the turn's end.
type texts struct{ done bool }

func (c *texts) Maps(string) bool { return true }
func (c *texts) Done() bool       { return c.done }

func (c *texts) Append(dst []byte, _ replay.Frame, env chatprotocol.ChatEventEnvelope) ([]byte, error) {
	switch ev := env.Event.(type) {
	case *chatprotocol.DeltaEvent:
		dst = fmt.Appendf(dst, "data: %s\n\n", ev.Text)
	case *chatprotocol.LifecycleEvent:
		c.done = ev.Status == chatprotocol.LifecycleCompleted
	}
	return dst, nil
}

// swapped is a window whose store can be replaced, as a window that lost
// what it held (a restart, a flush) and then sees new turns.
type swapped struct {
	mu sync.Mutex
	m  *replay.Memory
}

func (s *swapped) get() *replay.Memory  { s.mu.Lock(); defer s.mu.Unlock(); return s.m }
func (s *swapped) set(m *replay.Memory) { s.mu.Lock(); defer s.mu.Unlock(); s.m = m }

func (s *swapped) Append(ctx context.Context, key replay.Key, env *chatprotocol.ChatEventEnvelope) (replay.Frame, error) {
	return s.get().Append(ctx, key, env)
}

func (s *swapped) Read(ctx context.Context, key replay.Key, after int64, limit int) (replay.Bounds, []replay.Frame, error) {
	return s.get().Read(ctx, key, after, limit)
}

func (s *swapped) Bounds(ctx context.Context, key replay.Key) (replay.Bounds, error) {
	return s.get().Bounds(ctx, key)
}

func (s *swapped) Wait(ctx context.Context, key replay.Key, after int64) (replay.Bounds, error) {
	return s.get().Wait(ctx, key, after)
}

func (s *swapped) Capabilities() chatprotocol.ChatCapabilities { return s.get().Capabilities() }

// TestAReusedKeyNeverGetsTheEarlierTurnsOutput: a window that forgot a
// turn and then holds a new one under its key, whose first frame is byte
// for byte the earlier one's (a producer without a clock), while a stream
// of the earlier turn still holds its output: a stream of the new turn
// gets the new turn's output, never the earlier turn's.
func TestAReusedKeyNeverGetsTheEarlierTurnsOutput(t *testing.T) {
	key := replay.Key{ConversationID: "c", TurnID: "t"}
	turn := func(words ...string) []*chatprotocol.ChatEventEnvelope {
		evs := []chatprotocol.Event{&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}}
		for _, w := range words {
			evs = append(evs, &chatprotocol.DeltaEvent{Text: w})
		}
		return turnscript.Envelopes(key, evs)
	}
	w := &swapped{m: replay.NewMemory(nil)}
	for _, env := range turn("earlier ", "secret ") {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
	e := engine(t, w, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		e.Serve(rw, r, &serve.Stream{Key: key, NewCodec: func() serve.Codec { return &texts{} }})
	}))
	t.Cleanup(srv.Close)
	shutdownFirst(t, e)
	earlier, err := http.Get(srv.URL) // holds the turn's output while it waits
	require.NoError(t, err)
	defer earlier.Body.Close()
	buf := make([]byte, len("data: earlier \n\ndata: secret \n\n"))
	_, err = io.ReadFull(earlier.Body, buf)
	require.NoError(t, err)

	w.set(replay.NewMemory(nil))
	next := turn("later ", "words ")
	next = append(next, turnscript.Envelope(key, int64(len(next)+1), &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted}))
	for _, env := range next {
		_, err := w.Append(context.Background(), key, env)
		require.NoError(t, err)
	}
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Equal(t, "data: later \n\ndata: words \n\n", string(b))
}
