package uistream_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnhost"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// stopFixture is the bridge over a turnhost host, whose turns are
// cancelled through recovery, with the cancel endpoint's Cancel as the
// hook; the session is the X-User header.
type stopFixture struct {
	host *turnhost.Host
	srv  *httptest.Server
}

func newStopFixture(t *testing.T, pace time.Duration) *stopFixture {
	t.Helper()
	host, err := turnhost.New(pace)
	require.NoError(t, err)
	h, err := uistream.NewHandler(host.Window, &uistream.HandlerOptions{
		StartTurn: func(ctx context.Context, _ *http.Request, req *uistream.Request) (replay.Key, error) {
			return host.Start(ctx, req.ChatID)
		},
		ActiveTurn: func(_ context.Context, _ *http.Request, chatID string) (replay.Key, bool, error) {
			key, ok := host.Active(chatID)
			return key, ok, nil
		},
		Cancel: host.Cancels.Cancel,
	})
	require.NoError(t, err)
	mux := http.NewServeMux()
	h.Register(mux, "/api/chat")
	f := &stopFixture{host: host, srv: httptest.NewServer(mux)}
	t.Cleanup(func() { f.srv.Close(); host.Wait() })
	return f
}

// send sends a request to path as the user, with header and body.
func (f *stopFixture) send(t *testing.T, method, path string, header http.Header, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	for name, values := range header {
		req.Header[name] = values
	}
	req.Header.Set("X-User", turnhost.User)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	return resp
}

// start posts a turn of chat-1 and reads its stream up to its first
// text-delta; it returns the turn and the rest of the stream.
func (f *stopFixture) start(t *testing.T) (replay.Key, *bufio.Scanner, *http.Response) {
	t.Helper()
	resp := f.send(t, http.MethodPost, "/api/chat", http.Header{"Content-Type": {"application/json"}}, submit)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && !strings.Contains(sc.Text(), `"text-delta"`) {
	}
	require.NoError(t, sc.Err())
	key, ok := f.host.Active("chat-1")
	require.True(t, ok)
	return key, sc, resp
}

// rest reads the stream's remaining data lines.
func rest(t *testing.T, sc *bufio.Scanner, resp *http.Response) []string {
	t.Helper()
	defer resp.Body.Close()
	var out []string
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, line)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// ended waits for key's turn to end and returns recovery's status and the
// version-1 state's.
func (f *stopFixture) ended(t *testing.T, key replay.Key) (recovery.TurnStatus, chatprotocol.LifecycleStatus) {
	t.Helper()
	var status recovery.TurnStatus
	var lifecycle chatprotocol.LifecycleStatus
	require.Eventually(t, func() bool {
		var err error
		if status, err = f.host.Status(t.Context(), key); err != nil || !status.Terminal() {
			return false
		}
		tt, err := f.host.Turn(t.Context(), key)
		if err == nil {
			lifecycle = tt.Status
		}
		return lifecycle.Terminal()
	}, 10*time.Second, 5*time.Millisecond, "the turn did not end")
	return status, lifecycle
}

// readStop reads a stop's answer: its status and body.
func readStop(t *testing.T, resp *http.Response) (int, string) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// TestAStopByTheRecipeCancelsTheTurn: the ai documentation's stop, POST
// {api}/{chatId}/stop with the partial assistant message and the active
// stream's id as JSON, cancels the running turn through recovery: the
// stream ends with abort, the turn ends cancelled, a resume finds nothing,
// and a stop again answers the same and changes nothing. An empty body
// with X-Requested-With stops as well.
func TestAStopByTheRecipeCancelsTheTurn(t *testing.T) {
	for _, c := range []struct {
		name   string
		header http.Header
		body   func(key replay.Key) string
	}{
		{"the recipe's body", http.Header{"Content-Type": {"application/json"}}, func(key replay.Key) string {
			return `{"assistantMessage":{"id":"` + key.TurnID + `","role":"assistant","parts":[{"type":"text","text":"Refunds "}]},"activeStreamId":"` + key.TurnID + `"}`
		}},
		{"an empty object", http.Header{"Content-Type": {"application/json"}}, func(replay.Key) string { return `{}` }},
		{"no body, X-Requested-With", http.Header{"X-Requested-With": {"fetch"}}, func(replay.Key) string { return `` }},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newStopFixture(t, 100*time.Millisecond)
			key, sc, resp := f.start(t)
			status, body := readStop(t, f.send(t, http.MethodPost, "/api/chat/chat-1/stop", c.header, c.body(key)))
			assert.Equal(t, http.StatusOK, status)
			assert.JSONEq(t, `{"success":true}`, body)
			got := rest(t, sc, resp)
			assert.Equal(t, []string{`{"type":"abort"}`, `[DONE]`}, got[len(got)-2:])
			st, lc := f.ended(t, key)
			assert.Equal(t, recovery.TurnCancelled, st)
			assert.Equal(t, chatprotocol.LifecycleCancelled, lc)

			resume := f.send(t, http.MethodGet, "/api/chat/chat-1/stream", nil, "")
			resume.Body.Close()
			assert.Equal(t, http.StatusNoContent, resume.StatusCode)
			latest, err := f.host.Window.Bounds(t.Context(), key)
			require.NoError(t, err)
			status, body = readStop(t, f.send(t, http.MethodPost, "/api/chat/chat-1/stop", c.header, c.body(key)))
			assert.Equal(t, http.StatusOK, status)
			assert.JSONEq(t, `{"success":true}`, body)
			again, err := f.host.Window.Bounds(t.Context(), key)
			require.NoError(t, err)
			assert.Equal(t, latest, again)
		})
	}
}

// TestAStaleStopStopsNothing: a stop whose activeStreamId names another
// stream than the running turn (one that ended before it) answers success
// and leaves the turn to complete; so do a stop of a chat with no running
// turn and a stop by a caller without the right to cancel the turn.
func TestAStaleStopStopsNothing(t *testing.T) {
	f := newStopFixture(t, 20*time.Millisecond)
	status, body := readStop(t, f.send(t, http.MethodPost, "/api/chat/chat-1/stop", http.Header{"Content-Type": {"application/json"}}, `{}`))
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"success":true}`, body)
	key, sc, resp := f.start(t)
	status, body = readStop(t, f.send(t, http.MethodPost, "/api/chat/chat-1/stop", http.Header{"Content-Type": {"application/json"}}, `{"activeStreamId":"t-0"}`))
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"success":true}`, body)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.srv.URL+"/api/chat/chat-1/stop", strings.NewReader(`{}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-User", "mallory")
	stranger, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	status, body = readStop(t, stranger)
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"success":true}`, body)
	got := rest(t, sc, resp)
	assert.Equal(t, []string{`{"type":"finish"}`, `[DONE]`}, got[len(got)-2:])
	st, lc := f.ended(t, key)
	assert.Equal(t, recovery.TurnCompleted, st)
	assert.Equal(t, chatprotocol.LifecycleCompleted, lc)
}

// TestAStopACrossSitePageCouldSendStopsNothing: a POST stop that a page of
// another site could make the browser send (a form's types, or no
// Content-Type without X-Requested-With: the short fetch of the ai
// troubleshooting page) is 415 unsupported-media-type; a body that is not
// the stop's JSON is 400 invalid-input. Neither stops the turn.
func TestAStopACrossSitePageCouldSendStopsNothing(t *testing.T) {
	f := newStopFixture(t, 20*time.Millisecond)
	key, sc, resp := f.start(t)
	for _, ctype := range crossSite {
		header := http.Header{}
		if ctype != "" {
			header.Set("Content-Type", ctype)
		}
		status, body := readStop(t, f.send(t, http.MethodPost, "/api/chat/chat-1/stop", header, ""))
		assert.Equal(t, http.StatusUnsupportedMediaType, status, ctype)
		assert.Equal(t, refusal.CodeUnsupportedMediaType, codeOfBody(t, body), ctype)
	}
	for _, bad := range []string{`[]`, `{"activeStreamId":1}`, `{"activeStreamId":"a","activeStreamId":"b"}`, `{"ActiveStreamId":"x"}`, `{"assistantMessage":"hi"}`, `{`} {
		status, body := readStop(t, f.send(t, http.MethodPost, "/api/chat/chat-1/stop", http.Header{"Content-Type": {"application/json"}}, bad))
		assert.Equal(t, http.StatusBadRequest, status, bad)
		assert.Equal(t, refusal.CodeInvalidInput, codeOfBody(t, body), bad)
	}
	got := rest(t, sc, resp)
	assert.Equal(t, []string{`{"type":"finish"}`, `[DONE]`}, got[len(got)-2:])
	st, _ := f.ended(t, key)
	assert.Equal(t, recovery.TurnCompleted, st)
}

// TestAClientThatGoesAwayStopsNothing: a UI stream whose client goes away
// (chat.stop() alone, a reload, a lost connection) never cancels its turn:
// the turn completes, and a resume while it runs reads it whole.
func TestAClientThatGoesAwayStopsNothing(t *testing.T) {
	f := newStopFixture(t, 50*time.Millisecond)
	key, _, resp := f.start(t)
	resp.Body.Close()
	resume := f.send(t, http.MethodGet, "/api/chat/chat-1/stream", nil, "")
	got := chunks(t, resume)
	assert.Equal(t, `{"type":"start","messageId":"`+key.TurnID+`"}`, got[0])
	assert.Equal(t, []string{`{"type":"finish"}`, `[DONE]`}, got[len(got)-2:])
	st, lc := f.ended(t, key)
	assert.Equal(t, recovery.TurnCompleted, st)
	assert.Equal(t, chatprotocol.LifecycleCompleted, lc)
}

// codeOfBody is the code of a refusal's JSON body.
func codeOfBody(t *testing.T, body string) refusal.Code {
	t.Helper()
	var b struct{ Code refusal.Code }
	require.NoError(t, json.Unmarshal([]byte(body), &b), body)
	return b.Code
}
