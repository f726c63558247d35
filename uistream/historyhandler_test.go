package uistream_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// headerGate is a Gate over a memory store whose caller is the X-User
// header.
func headerGate() *conversation.Gate {
	return &conversation.Gate{Store: conversation.NewMemoryStore(), Access: conversation.OwnerOnly(func(r *http.Request) (conversation.Principal, error) {
		if u := r.Header.Get("X-User"); u != "" {
			return conversation.Principal{ID: u}, nil
		}
		return conversation.Principal{}, errors.New("no session")
	})}
}

// got is a response as a client sees it, the Date header aside.
type got struct {
	status int
	header http.Header
	body   string
}

func send(t *testing.T, h http.Handler, method, path, user, body string) got {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if user != "" {
		r.Header.Set("X-User", user)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	res := w.Result()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	res.Header.Del("Date")
	return got{res.StatusCode, res.Header, string(b)}
}

// TestHistoryHandler: the chat's owner reads its UIMessage[]; no session,
// another caller and an unknown chat get the same 404.
func TestHistoryHandler(t *testing.T) {
	ctx := t.Context()
	g := headerGate()
	w := replay.NewMemory(nil)
	_, err := g.Store.Create(ctx, "chat-1", conversation.Principal{ID: "alice"})
	require.NoError(t, err)
	tu, _, err := g.Store.StartTurn(ctx, "chat-1", conversation.TurnStart{UserText: "hi"})
	require.NoError(t, err)
	key := replay.Key{ConversationID: "chat-1", TurnID: tu.ID}
	p, err := turn.Start(ctx, w, key, nil)
	require.NoError(t, err)
	require.NoError(t, p.Delta(ctx, "Hello"))
	require.NoError(t, p.Complete(ctx))
	require.NoError(t, conversation.EndFromWindow(ctx, g.Store, w, key))

	h, err := uistream.NewHistoryHandler(g, nil)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/api/chat/{chatId}/messages", h)
	ok := send(t, mux, http.MethodGet, "/api/chat/chat-1/messages", "alice", "")
	require.Equal(t, http.StatusOK, ok.status, ok.body)
	assert.Equal(t, "application/json", ok.header.Get("Content-Type"))
	assert.Equal(t, "no-store", ok.header.Get("Cache-Control"))
	assert.JSONEq(t, `[{"id":"`+tu.ID+`-user","role":"user","parts":[{"type":"text","text":"hi","state":"done"}]},
		{"id":"`+tu.ID+`","role":"assistant","parts":[{"type":"step-start"},{"type":"text","text":"Hello","state":"done"}]}]`, ok.body)
	head := send(t, mux, http.MethodHead, "/api/chat/chat-1/messages", "alice", "")
	assert.Equal(t, http.StatusOK, head.status)
	assert.Empty(t, head.body)

	unknown := send(t, mux, http.MethodGet, "/api/chat/chat-9/messages", "alice", "")
	assert.Equal(t, http.StatusNotFound, unknown.status)
	assert.Contains(t, unknown.body, `"code":"turn-not-found"`)
	assert.Equal(t, unknown, send(t, mux, http.MethodGet, "/api/chat/chat-1/messages", "bob", ""), "another caller")
	assert.Equal(t, unknown, send(t, mux, http.MethodGet, "/api/chat/chat-1/messages", "", ""), "no session")

	post := send(t, mux, http.MethodPost, "/api/chat/chat-1/messages", "alice", "")
	assert.Equal(t, http.StatusMethodNotAllowed, post.status)
	assert.Equal(t, "GET, HEAD", post.header.Get("Allow"))
	assert.Contains(t, post.body, `"code":"method-not-allowed"`)

	_, err = uistream.NewHistoryHandler(&conversation.Gate{}, nil)
	assert.Error(t, err)
}

// TestLastMessageOnly: a client that sends its last message only, as the
// ai package's prepareSendMessagesRequest recipe does ({id, message}),
// starts a turn with that message as the request's messages; a body
// carrying both forms is refused.
func TestLastMessageOnly(t *testing.T) {
	var seen *uistream.Request
	h, err := uistream.NewHandler(replay.NewMemory(nil), &uistream.HandlerOptions{
		StartTurn: func(_ context.Context, _ *http.Request, req *uistream.Request) (replay.Key, error) {
			seen = req
			return replay.Key{}, refusal.ErrTurnNotFound // the test reads the request only
		},
		ActiveTurn: func(context.Context, *http.Request, string) (replay.Key, bool, error) {
			return replay.Key{}, false, nil
		},
	})
	require.NoError(t, err)
	const msg = `{"id":"u2","role":"user","parts":[{"type":"text","text":"And then?"}]}`
	a := send(t, http.HandlerFunc(h.ServeStart), http.MethodPost, "/api/chat", "", `{"id":"chat-1","message":`+msg+`}`)
	assert.Equal(t, http.StatusNotFound, a.status, a.body)
	require.NotNil(t, seen)
	assert.Equal(t, "chat-1", seen.ChatID)
	assert.Equal(t, "submit-message", seen.Trigger)
	assert.JSONEq(t, `[`+msg+`]`, string(seen.Messages))

	seen = nil
	both := send(t, http.HandlerFunc(h.ServeStart), http.MethodPost, "/api/chat", "", `{"id":"chat-1","message":`+msg+`,"messages":[],"trigger":"submit-message"}`)
	assert.Equal(t, http.StatusBadRequest, both.status)
	assert.Contains(t, both.body, `"code":"invalid-input"`)
	assert.Nil(t, seen)
}
