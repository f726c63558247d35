package stream_test

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
)

// TestEveryOtherMethodIsTheJSON405: mounted without a method, as the
// package documentation mounts it, the Handler answers every method but
// GET and HEAD with method-not-allowed and Allow, before it asks
// Authorize or the window anything (docs/contract.md section 12.5).
func TestEveryOtherMethodIsTheJSON405(t *testing.T) {
	w := replay.NewMemory(nil)
	appendAll(t, w, keyT1, script(keyT1, 2, 3))
	h := newHandler(t, w, &stream.HandlerOptions{Authorize: func(*http.Request, replay.Key) error {
		t.Error("Authorize was asked about a request of another method")
		return nil
	}})
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions, "BREW"} {
		rec := record(h, httptest.NewRequest(method, path(keyT1), nil))
		assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, method)
		assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"), method)
		assert.Equal(t, refusal.CodeMethodNotAllowed, refusalOf(t, rec).Code, method)
	}
}

// Every refusal of the Handler: the status is the one table's
// (refusal.HTTPStatus), the headers every refusal carries are set, and the
// body's bytes are exactly those the Handler has always written.
func TestHandlerRefusalsUseTheOneTable(t *testing.T) {
	w := replay.NewMemory(&replay.MemoryOptions{MaxFrames: 5})
	appendAll(t, w, keyT1, script(keyT1, 20, 3)) // 22 frames, 18..22 retained
	h := newHandler(t, w, nil)
	down := keyT1
	down.ConversationID = "down"
	closed := newHandler(t, w, nil)
	closed.Close()
	get := func(target, cursor string) *http.Request {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		if cursor != "" {
			req.Header.Set("Last-Event-ID", cursor)
		}
		return req
	}
	for _, c := range []struct {
		name string
		rec  *httptest.ResponseRecorder
		code refusal.Code
		body string
	}{
		{"malformed cursor", record(h, get(path(keyT1), "5x")), refusal.CodeInvalidCursor,
			`{"code":"invalid-cursor","message":"a cursor is decimal digits only"}`},
		{"unknown turn", record(h, get(path(replay.Key{ConversationID: "c-9", TurnID: "t-1"}), "")), refusal.CodeTurnNotFound,
			`{"code":"turn-not-found","message":"no such turn"}`},
		{"cursor ahead", record(h, get(path(keyT1), "23")), refusal.CodeCursorAhead,
			`{"code":"cursor-ahead","message":"the cursor is beyond the latest seq","lower":17,"latest":22}`},
		{"stale cursor", record(h, get(path(keyT1), "3")), refusal.CodeStaleCursor,
			`{"code":"stale-cursor","message":"the cursor is below the retained lower bound; start again from the turn's history","lower":17,"latest":22}`},
		{"hook fails", record(h, get(path(down), "")), refusal.CodeStoreUnavailable,
			`{"code":"store-unavailable","message":"the stream is unavailable; retry later"}`},
		{"closed", record(closed, get(path(keyT1), "")), refusal.CodeStoreUnavailable,
			`{"code":"store-unavailable","message":"the server is shutting down; retry later"}`},
		{"a POST", record(h, httptest.NewRequest(http.MethodPost, path(keyT1), nil)), refusal.CodeMethodNotAllowed,
			`{"code":"method-not-allowed","message":"a stream is read with GET"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, refusal.HTTPStatus(c.code), c.rec.Code)
			assert.Equal(t, c.body+"\n", c.rec.Body.String())
			hd := c.rec.Header()
			assert.Equal(t, "application/json", hd.Get("Content-Type"))
			assert.Equal(t, "no-store", hd.Get("Cache-Control"))
			assert.Equal(t, "nosniff", hd.Get("X-Content-Type-Options"))
			assert.Equal(t, strconv.Itoa(len(c.body)+1), hd.Get("Content-Length"))
			if c.code == refusal.CodeStoreUnavailable {
				assert.Equal(t, "2", hd.Get("Retry-After"))
			}
			if c.code == refusal.CodeMethodNotAllowed {
				assert.Equal(t, "GET, HEAD", hd.Get("Allow"))
			}
			require.Equal(t, c.code, refusalOf(t, c.rec).Code)
		})
	}
}
