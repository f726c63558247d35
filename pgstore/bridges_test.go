package pgstore

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/cutproxy"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// bridgeInstances serves the bridges from two Windows on the same database,
// two instances of one host (docs/contract.md section 18): the turns are
// produced through instance a's window, and the host's map of running turns
// stands for a store both share.
type bridgeInstances struct {
	host   *turnscript.Host
	ui, ag [2]*httptest.Server
}

func newBridgeInstances(t *testing.T) *bridgeInstances {
	t.Helper()
	windows := [2]*Window{
		newTestWindow(t, pgx.ReadCommitted, WindowOptions{CatchUpInterval: time.Second}),
		newTestWindow(t, pgx.ReadCommitted, WindowOptions{CatchUpInterval: time.Second}),
	}
	b := &bridgeInstances{host: &turnscript.Host{Window: windows[0], Pace: 40 * time.Millisecond, Card: true}}
	runs := map[string]replay.Key{} // run id → turn: a reconnect replays the run
	for i, w := range windows {
		u, err := uistream.NewHandler(w, &uistream.HandlerOptions{
			StartTurn: func(_ context.Context, _ *http.Request, req *uistream.Request) (replay.Key, error) {
				return b.host.Start(req.ChatID), nil
			},
			ActiveTurn: func(_ context.Context, _ *http.Request, chatID string) (replay.Key, bool, error) {
				key, ok := b.host.Active(chatID)
				return key, ok, nil
			},
		})
		require.NoError(t, err)
		mux := http.NewServeMux()
		u.Register(mux, "/api/chat")
		b.ui[i] = httptest.NewServer(mux)
		a, err := agui.NewHandler(w, &agui.HandlerOptions{
			StartRun: func(_ context.Context, _ *http.Request, in *agui.RunInput) (replay.Key, error) {
				if key, ok := runs[in.RunID]; ok {
					return key, nil
				}
				runs[in.RunID] = b.host.Start(in.ThreadID)
				return runs[in.RunID], nil
			},
		})
		require.NoError(t, err)
		b.ag[i] = httptest.NewServer(a)
	}
	t.Cleanup(func() {
		for i := range 2 {
			b.ui[i].Close()
			b.ag[i].Close()
		}
		b.host.Wait()
	})
	return b
}

// body reads resp whole, without its heartbeat comments.
func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, _ := io.ReadAll(resp.Body) // a cut body ends in an error: what came is kept
	return strings.ReplaceAll(string(b), ": heartbeat\n\n", "")
}

// TestBridgesResumeOnAnotherInstance: a UI message stream cut on one
// instance resumes on the other, from the first chunk, whole; an AG-UI
// run posted again on the other instance replays the same events.
func TestBridgesResumeOnAnotherInstance(t *testing.T) {
	b := newBridgeInstances(t)
	proxy, err := cutproxy.New(strings.TrimPrefix(b.ui[0].URL, "http://"), &cutproxy.Options{
		Arm: []byte("text/event-stream"), Plan: cutproxy.Fixed(cutproxy.Cut{Bytes: 300})})
	require.NoError(t, err)
	t.Cleanup(func() { proxy.Close() })
	submit := `{"id":"chat-x","messages":[],"trigger":"submit-message"}`
	resp, err := http.Post("http://"+proxy.Addr()+"/api/chat", "application/json", strings.NewReader(submit))
	require.NoError(t, err)
	cut := body(t, resp)
	require.Equal(t, 1, proxy.Stats().Cuts)
	require.NotContains(t, cut, "[DONE]")

	resp, err = http.Get(b.ui[1].URL + "/api/chat/chat-x/stream")
	require.NoError(t, err)
	resumed := body(t, resp)
	assert.True(t, strings.HasPrefix(resumed, cut), "the resume replays from the first chunk:\n%s\n%s", cut, resumed)
	assert.True(t, strings.HasSuffix(resumed, `data: {"type":"finish"}`+"\n\ndata: [DONE]\n\n"), resumed)
	assert.Contains(t, resumed, `"type":"data-card"`)
	for _, w := range append(turnscript.Before, turnscript.After...) {
		assert.Contains(t, resumed, `"delta":"`+w+`"`)
	}
	resp, err = http.Get(b.ui[1].URL + "/api/chat/chat-x/stream")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode, "the turn has ended")

	run := `{"threadId":"thread-x","runId":"run-x","messages":[]}`
	resp, err = http.Post(b.ag[0].URL, "application/json", strings.NewReader(run))
	require.NoError(t, err)
	first := body(t, resp)
	resp, err = http.Post(b.ag[1].URL, "application/json", strings.NewReader(run))
	require.NoError(t, err)
	assert.Equal(t, first, body(t, resp), "the same run on the other instance")
	assert.Contains(t, first, `"outcome":{"type":"interrupt"`)
}
