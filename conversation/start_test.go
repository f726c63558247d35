package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// post sends body to h as user with contentType and returns the answer.
func post(t *testing.T, h http.Handler, path, user, contentType, body string) answer {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	if user != "" {
		r.Header.Set("X-User", user)
	}
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	res := w.Result()
	res.Header.Del("Date")
	return answer{status: res.StatusCode, header: res.Header, body: w.Body.String()}
}

func codeOf(t *testing.T, a answer) string {
	t.Helper()
	var b struct {
		Code string `json:"code"`
	}
	require.NoError(t, json.Unmarshal([]byte(a.body), &b), a.body)
	return b.Code
}

func TestStartHandler(t *testing.T) {
	s := conversation.NewMemoryStore()
	ctx := t.Context()
	c, err := s.Create(ctx, "c1", alice)
	require.NoError(t, err)
	failRun := false
	var ran []conversation.Turn
	g := &conversation.Gate{Store: s, Access: conversation.OwnerOnly(session)}
	h, err := conversation.NewStartHandler(g, &conversation.StartHandlerOptions{
		Run: func(_ context.Context, _ *http.Request, _ conversation.Conversation, tu conversation.Turn) error {
			if failRun {
				return errors.New("no worker")
			}
			ran = append(ran, tu)
			return nil
		}})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/conversations/{conversation}/turns", h)
	const path = "/conversations/c1/turns"
	const js = "application/json"

	ok := post(t, mux, path, "alice", js, `{"text":"hello"}`)
	require.Equal(t, http.StatusCreated, ok.status, ok.body)
	require.Len(t, ran, 1)
	require.JSONEq(t, `{"conversationId":"c1","turnId":"`+ran[0].ID+`","position":1}`, ok.body)
	run, running, err := s.Running(ctx, c.ID)
	require.NoError(t, err)
	require.True(t, running)
	require.Equal(t, "hello", run.UserText)

	again := post(t, mux, path, "alice", js, `{"text":"again"}`)
	require.Equal(t, http.StatusConflict, again.status)
	require.Equal(t, "turn-running", codeOf(t, again))

	forbidden := post(t, mux, path, "bob", js, `{"text":"x"}`)
	require.Equal(t, http.StatusNotFound, forbidden.status)
	require.Equal(t, "turn-not-found", codeOf(t, forbidden))
	require.Equal(t, forbidden, post(t, mux, "/conversations/no-such/turns", "alice", js, `{"text":"x"}`))

	for _, c := range []struct {
		user, contentType, body string
		status                  int
		code                    string
	}{
		{"", js, `{"text":"x"}`, 401, "unauthenticated"},
		{"alice", "text/plain", `{"text":"x"}`, 415, "unsupported-media-type"},
		{"alice", "", `{"text":"x"}`, 415, "unsupported-media-type"},
		{"alice", js, `{"text":"x","Text":"y"}`, 400, "invalid-input"},
		{"alice", js, `{"text":1}`, 400, "invalid-input"},
		{"alice", js, `{"text":"a\u0000b"}`, 400, "invalid-input"},
		{"alice", js, `{"text":"` + strings.Repeat("x", 70<<10) + `"}`, 413, "frame-too-large"},
	} {
		a := post(t, mux, path, c.user, c.contentType, c.body)
		require.Equal(t, c.status, a.status, "%+v: %s", c, a.body)
		require.Equal(t, c.code, codeOf(t, a))
	}
	r := httptest.NewRequest(http.MethodGet, path, nil)
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, r)
	require.Equal(t, http.StatusMethodNotAllowed, w.Code)
	require.Equal(t, "POST", w.Header().Get("Allow"))

	// A producer that does not start: 503, and the turn ends failed.
	require.NoError(t, s.EndTurn(ctx, c.ID, ran[0].ID, []byte(`{}`)))
	failRun = true
	failed := post(t, mux, path, "alice", js, `{"text":"third"}`)
	require.Equal(t, http.StatusServiceUnavailable, failed.status)
	require.Equal(t, "store-unavailable", codeOf(t, failed))
	_, running, err = s.Running(ctx, c.ID)
	require.NoError(t, err)
	require.False(t, running)
	hist, err := s.History(ctx, c.ID)
	require.NoError(t, err)
	require.Len(t, hist.Turns, 2)
	red, err := hist.Turns[1].Reduce()
	require.NoError(t, err)
	require.Equal(t, "failed", red.Status)
	require.Equal(t, "the turn could not start", red.Reason)
}

// TestStartHandlerIdempotencyKey: a start's Idempotency-Key is its
// request key: the same key again answers 200 with its turn, running or
// ended, and runs nothing; another key while it runs is turn-running; a
// key no store can hold is invalid-input; another's conversation is
// turn-not-found whatever the key.
func TestStartHandlerIdempotencyKey(t *testing.T) {
	s := conversation.NewMemoryStore()
	ctx := t.Context()
	c, err := s.Create(ctx, "c1", alice)
	require.NoError(t, err)
	runs := 0
	g := &conversation.Gate{Store: s, Access: conversation.OwnerOnly(session)}
	h, err := conversation.NewStartHandler(g, &conversation.StartHandlerOptions{
		Run: func(context.Context, *http.Request, conversation.Conversation, conversation.Turn) error {
			runs++
			return nil
		}})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/conversations/{conversation}/turns", h)
	start := func(user, key, body string) answer {
		r := httptest.NewRequest(http.MethodPost, "/conversations/c1/turns", strings.NewReader(body))
		r.Header.Set("X-User", user)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Idempotency-Key", key)
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		return answer{status: w.Code, header: w.Result().Header, body: w.Body.String()}
	}

	first := start("alice", "k-1", `{"text":"hello"}`)
	require.Equal(t, http.StatusCreated, first.status, first.body)
	run, running, err := s.Running(ctx, c.ID)
	require.NoError(t, err)
	require.True(t, running)
	require.Equal(t, "k-1", run.Key)
	want := `{"conversationId":"c1","turnId":"` + run.ID + `","position":1}`
	require.JSONEq(t, want, first.body)

	again := start("alice", "k-1", `{"text":"hello"}`)
	require.Equal(t, http.StatusOK, again.status, again.body)
	require.JSONEq(t, want, again.body)
	other := start("alice", "k-2", `{"text":"hello"}`)
	require.Equal(t, http.StatusConflict, other.status)
	require.Equal(t, "turn-running", codeOf(t, other))
	denied := start("bob", "k-1", `{"text":"hello"}`)
	require.Equal(t, http.StatusNotFound, denied.status)
	require.Equal(t, "turn-not-found", codeOf(t, denied))
	bad := start("alice", strings.Repeat("k", conversation.MaxIDBytes+1), `{"text":"hello"}`)
	require.Equal(t, http.StatusBadRequest, bad.status)
	require.Equal(t, "invalid-input", codeOf(t, bad))

	require.NoError(t, s.EndTurn(ctx, c.ID, run.ID, []byte(`{}`)))
	ended := start("alice", "k-1", `{"text":"hello"}`)
	require.Equal(t, http.StatusOK, ended.status, ended.body)
	require.JSONEq(t, want, ended.body)
	require.Equal(t, 1, runs, "a start seen before runs nothing")
	got, err := s.Get(ctx, c.ID)
	require.NoError(t, err)
	require.Equal(t, 1, got.Turns)
}

// TestStartHandlerKeyOfAForgottenTurn: with a Settling store, the
// Idempotency-Key of a turn that ended without a frame in the window (its
// Run failed) answers 410 stale-cursor with the bounds rather than the
// turn, whose stream would wait for frames that never come; another's
// conversation is still turn-not-found.
func TestStartHandlerKeyOfAForgottenTurn(t *testing.T) {
	s := conversation.Settling{Store: conversation.NewMemoryStore(), Window: replay.NewMemory(nil)}
	_, err := s.Create(t.Context(), "c1", alice)
	require.NoError(t, err)
	g := &conversation.Gate{Store: s, Access: conversation.OwnerOnly(session)}
	h, err := conversation.NewStartHandler(g, &conversation.StartHandlerOptions{
		Run: func(context.Context, *http.Request, conversation.Conversation, conversation.Turn) error {
			return errors.New("no worker")
		}})
	require.NoError(t, err)
	start := func(user string) answer {
		r := httptest.NewRequest(http.MethodPost, "/conversations/c1/turns", strings.NewReader(`{"text":"hello"}`))
		r.SetPathValue("conversation", "c1")
		r.Header.Set("X-User", user)
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Idempotency-Key", "k-1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return answer{status: w.Code, header: w.Result().Header, body: w.Body.String()}
	}
	failed := start("alice")
	require.Equal(t, http.StatusServiceUnavailable, failed.status, failed.body)
	again := start("alice")
	require.Equal(t, http.StatusGone, again.status, again.body)
	require.Equal(t, "stale-cursor", codeOf(t, again))
	require.JSONEq(t, `{"code":"stale-cursor","message":"the window no longer holds the turn; read the conversation's history","lower":0,"latest":0}`, again.body)
	denied := start("bob")
	require.Equal(t, http.StatusNotFound, denied.status)
	require.Equal(t, "turn-not-found", codeOf(t, denied))
}
