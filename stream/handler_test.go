package stream_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/sse"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// record answers req with h through the test mux.
func record(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	mux(h).ServeHTTP(rec, req)
	return rec
}

// refusalOf decodes a refusal body.
func refusalOf(t *testing.T, rec *httptest.ResponseRecorder) refusal.Body {
	t.Helper()
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var r refusal.Body
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &r), rec.Body.String())
	return r
}

// wantFrames is the bytes the handler writes for the frames of key's turn
// after cursor: AppendFrame of each stored frame.
func wantFrames(t *testing.T, w replay.Window, key replay.Key, after int64) []byte {
	t.Helper()
	_, frames, err := w.Read(context.Background(), key, after, math.MaxInt)
	require.NoError(t, err)
	var out []byte
	for _, f := range frames {
		out, err = sse.AppendFrame(out, sse.Frame{ID: strconv.FormatInt(f.Seq, 10), Data: f.Data})
		require.NoError(t, err)
	}
	return out
}

// readBlock reads one frame (up to its blank line) from br.
func readBlock(t *testing.T, br *bufio.Reader) string {
	t.Helper()
	var b strings.Builder
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		b.WriteString(line)
		if line == "\n" {
			return b.String()
		}
	}
}

func TestHandlerReplaysThenGoesLive(t *testing.T) {
	w := newWindow()
	envs := script(keyT1, 30, 8)
	appendAll(t, w, keyT1, envs[:3])
	srv := newServer(t, newHandler(t, w, &stream.HandlerOptions{Options: serve.Options{Retry: 1500 * time.Millisecond}}))

	resp, err := http.Get(srv.URL + path(keyT1))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, sse.ContentType, resp.Header.Get("Content-Type"))
	assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
	br := bufio.NewReader(resp.Body)

	opening := readBlock(t, br)
	assert.Regexp(t, `^event: heartbeat\ndata: \{"tsMs":[0-9]+\}\nretry: 1500\n\n$`, opening)
	var replayed strings.Builder
	for range 3 {
		replayed.WriteString(readBlock(t, br))
	}
	assert.Equal(t, string(wantFrames(t, w, keyT1, 0)), replayed.String(), "the retained frames, as stored")

	go appendAll(t, w, keyT1, envs[3:]) // live: appended while the client is connected
	rest, err := io.ReadAll(br)         // ends after the frame that ends the turn
	require.NoError(t, err)
	assert.Equal(t, string(wantFrames(t, w, keyT1, 3)), string(rest), "every live frame once, in seq order")
}

func TestHandlerResumesAfterCursor(t *testing.T) {
	w := newWindow()
	appendAll(t, w, keyT1, script(keyT1, 5, 3))
	h := newHandler(t, w, nil)
	for _, tc := range []struct{ name, header, query string }{
		{name: "header", header: "4"},
		{name: "query", query: "4"},
		{name: "header wins", header: "4", query: "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, path(keyT1)+"?lastEventId="+tc.query, nil)
			if tc.header != "" {
				req.Header.Set("Last-Event-ID", tc.header)
			}
			rec := record(h, req)
			require.Equal(t, http.StatusOK, rec.Code)
			_, stored, _ := bytes.Cut(rec.Body.Bytes(), []byte("\n\n"))
			assert.Equal(t, string(wantFrames(t, w, keyT1, 4)), string(stored))
		})
	}
}

func TestHandlerAnswers204AtTheEndOfAnEndedTurn(t *testing.T) {
	w := newWindow()
	envs := script(keyT1, 5, 3)
	appendAll(t, w, keyT1, envs)
	h := newHandler(t, w, nil)
	latest := strconv.Itoa(len(envs))
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodGet, path(keyT1), nil),
		httptest.NewRequest(http.MethodGet, path(keyT1)+"?lastEventId="+latest, nil),
	} {
		if req.URL.RawQuery == "" {
			req.Header.Set("Last-Event-ID", latest)
		}
		rec := record(h, req)
		assert.Equal(t, http.StatusNoContent, rec.Code)
		assert.Empty(t, rec.Body.Bytes())
	}
}

func TestHandlerRefusesMalformedCursors(t *testing.T) {
	w := newWindow()
	appendAll(t, w, keyT1, script(keyT1, 5, 3))
	h := newHandler(t, w, nil)
	bad := []string{"-1", "1e3", " 5", "5 ", "+5", "05", "0x5", "9007199254740992", "99999999999999999999",
		"5\r\n", "5\n", "5\x00", "\x005", "٥", "1.0"}
	for _, cursor := range bad {
		for _, where := range []string{"header", "query"} {
			t.Run(where+" "+strconv.Quote(cursor), func(t *testing.T) {
				req := httptest.NewRequest(http.MethodGet, path(keyT1), nil)
				if where == "header" {
					req.Header["Last-Event-Id"] = []string{cursor}
				} else {
					req.URL.RawQuery = "lastEventId=" + urlEscape(cursor)
				}
				rec := record(h, req)
				require.Equal(t, http.StatusBadRequest, rec.Code)
				r := refusalOf(t, rec)
				assert.Equal(t, refusal.CodeInvalidCursor, r.Code)
				assert.Nil(t, r.Lower)
			})
		}
	}
	t.Run("repeated", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, path(keyT1)+"?lastEventId=1&lastEventId=2", nil)
		assert.Equal(t, http.StatusBadRequest, record(h, req).Code)
	})
	t.Run("largest seq is a cursor", func(t *testing.T) {
		req := httptest.NewRequest(http.MethodGet, path(keyT1), nil)
		req.Header.Set("Last-Event-ID", "9007199254740991")
		rec := record(h, req)
		assert.Equal(t, http.StatusConflict, rec.Code, "well-formed, beyond the latest")
	})
}

// urlEscape percent-encodes every byte of s.
func urlEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:]))
	}
	return b.String()
}

func TestHandlerAnswersUnknownAndForbiddenAlike(t *testing.T) {
	w := newWindow()
	appendAll(t, w, keyT1, script(keyT1, 5, 3))
	appendAll(t, w, replay.Key{ConversationID: "c-3", TurnID: "t-1"}, script(replay.Key{ConversationID: "c-3", TurnID: "t-1"}, 1, 1))
	h := newHandler(t, w, nil)
	unknown := record(h, httptest.NewRequest(http.MethodGet, path(replay.Key{ConversationID: "c-9", TurnID: "t-1"}), nil))
	require.Equal(t, http.StatusNotFound, unknown.Code)
	assert.Equal(t, refusal.CodeTurnNotFound, refusalOf(t, unknown).Code)

	answers := map[string]*httptest.ResponseRecorder{}
	denied := httptest.NewRequest(http.MethodGet, path(keyT1), nil)
	denied.Header.Set("X-User", "mallory")
	answers["caller without rights"] = record(h, denied)
	answers["existing turn the hook does not know"] = record(h, httptest.NewRequest(http.MethodGet, path(replay.Key{ConversationID: "c-3", TurnID: "t-1"}), nil))
	answers["escaped LF in a path id"] = record(h, httptest.NewRequest(http.MethodGet, "/conversations/c-1/turns/t%0A1/events", nil))
	odd := map[string]replay.Key{
		"empty turn":   {ConversationID: "c-1"},
		"257 bytes":    {ConversationID: "c-1", TurnID: strings.Repeat("t", 257)},
		"invalid UTF8": {ConversationID: "c-1", TurnID: "t\xff"},
		"NUL":          {ConversationID: "c\x001", TurnID: "t-1"},
		"CR":           {ConversationID: "c-1", TurnID: "t\r1"},
		"LF":           {ConversationID: "c-1", TurnID: "t\n1"},
	}
	for name, key := range odd {
		hk := newHandler(t, w, &stream.HandlerOptions{Key: func(*http.Request) (replay.Key, error) { return key, nil }})
		answers[name] = record(hk, httptest.NewRequest(http.MethodGet, path(keyT1), nil))
	}
	hErr := newHandler(t, w, &stream.HandlerOptions{Key: func(*http.Request) (replay.Key, error) { return replay.Key{}, errors.New("no such route") }})
	answers["Key error"] = record(hErr, httptest.NewRequest(http.MethodGet, path(keyT1), nil))
	for name, rec := range answers {
		assert.Equal(t, unknown.Code, rec.Code, name)
		assert.Equal(t, unknown.Header(), rec.Header(), name)
		assert.Equal(t, unknown.Body.String(), rec.Body.String(), name)
	}
}

func TestHandlerRefusesCursorsOutsideTheWindow(t *testing.T) {
	w := replay.NewMemory(&replay.MemoryOptions{MaxFrames: 5})
	envs := script(keyT1, 20, 3) // 22 frames, 18..22 retained
	appendAll(t, w, keyT1, envs)
	h := newHandler(t, w, nil)
	for _, tc := range []struct {
		cursor string
		status int
		code   refusal.Code
	}{
		{cursor: "", status: http.StatusGone, code: refusal.CodeStaleCursor},
		{cursor: "3", status: http.StatusGone, code: refusal.CodeStaleCursor},
		{cursor: "16", status: http.StatusGone, code: refusal.CodeStaleCursor},
		{cursor: "23", status: http.StatusConflict, code: refusal.CodeCursorAhead},
	} {
		req := httptest.NewRequest(http.MethodGet, path(keyT1), nil)
		req.Header.Set("Last-Event-ID", tc.cursor)
		rec := record(h, req)
		require.Equal(t, tc.status, rec.Code, tc.cursor)
		r := refusalOf(t, rec)
		assert.Equal(t, tc.code, r.Code)
		require.NotNil(t, r.Lower)
		require.NotNil(t, r.Latest)
		assert.Equal(t, int64(17), *r.Lower)
		assert.Equal(t, int64(22), *r.Latest)
	}
	req := httptest.NewRequest(http.MethodGet, path(keyT1), nil)
	req.Header.Set("Last-Event-ID", "17")
	rec := record(h, req)
	require.Equal(t, http.StatusOK, rec.Code, "the lower bound itself is a cursor")
	_, stored, _ := bytes.Cut(rec.Body.Bytes(), []byte("\n\n"))
	assert.Equal(t, string(wantFrames(t, w, keyT1, 17)), string(stored))
}

// failingWindow fails every call.
type failingWindow struct{ replay.Window }

var errWindowDown = errors.New("replay store connection refused")

func (failingWindow) Read(context.Context, replay.Key, int64, int) (replay.Bounds, []replay.Frame, error) {
	return replay.Bounds{}, nil, errWindowDown
}

func TestHandlerAnswers503WhenItCannotDecide(t *testing.T) {
	for name, h := range map[string]*stream.Handler{
		"hook fails":   newHandler(t, newWindow(), nil),
		"window fails": newHandler(t, failingWindow{newWindow()}, nil),
	} {
		t.Run(name, func(t *testing.T) {
			key := keyT1
			if name == "hook fails" {
				key.ConversationID = "down"
			}
			rec := record(h, httptest.NewRequest(http.MethodGet, path(key), nil))
			require.Equal(t, http.StatusServiceUnavailable, rec.Code)
			assert.Equal(t, refusal.CodeStoreUnavailable, refusalOf(t, rec).Code)
			assert.NotContains(t, rec.Body.String(), "down")
			assert.NotContains(t, rec.Body.String(), "refused")
		})
	}
}

func TestNewHandlerNeedsAWindowAndAHook(t *testing.T) {
	_, err := stream.NewHandler(nil, &stream.HandlerOptions{Authorize: authorize})
	assert.Error(t, err)
	_, err = stream.NewHandler(newWindow(), nil)
	assert.Error(t, err)
	_, err = stream.NewHandler(newWindow(), &stream.HandlerOptions{})
	assert.Error(t, err)
	_, err = stream.NewHandler(newWindow(), &stream.HandlerOptions{Authorize: authorize, Options: serve.Options{Retry: -time.Second}})
	assert.Error(t, err)
}

func TestHandlerAnswersHEADWithTheHeadersOnly(t *testing.T) {
	w := newWindow()
	appendAll(t, w, keyT1, script(keyT1, 3, 3)[:2]) // live: a GET would wait
	srv := newServer(t, newHandler(t, w, nil))
	resp, err := http.Head(srv.URL + path(keyT1))
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, sse.ContentType, resp.Header.Get("Content-Type"))
}
