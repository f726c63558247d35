package answerhttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/answerhttp"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// A body is JSON: no Content-Type, or application/json with any
// parameters and a charset only if utf-8, in any case. Anything else is
// unsupported-media-type, before the body is read or the card looked at.
func TestContentType(t *testing.T) {
	for _, ctype := range []string{"", "application/json", "application/json; charset=utf-8",
		"Application/JSON;Charset=UTF-8", `application/json; charset="utf-8"`, "application/json; v=1"} {
		e := newEnv(t, nil)
		status, _, reply, raw := e.do(request{ctype: ctype})
		assert.Equal(t, http.StatusOK, status, "%q: %s", ctype, raw)
		assert.Equal(t, refusal.Code(""), reply.Code, "%q", ctype)
	}
	e := newEnv(t, nil)
	for _, ctype := range []string{"text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
		"multipart/form-data; boundary=x", "application/json; charset=iso-8859-1", "application/jsonx",
		"application/merge-patch+json", "application/json, text/plain", "application/json;;", "json", " "} {
		status, _, reply, raw := e.do(request{ctype: ctype})
		assert.Equal(t, http.StatusUnsupportedMediaType, status, "%q: %s", ctype, raw)
		assert.Equal(t, refusal.CodeUnsupportedMediaType, reply.Code, "%q", ctype)
	}
	req := httptest.NewRequest(http.MethodPost, "/conversations/conv-1/cards/card-1/answer",
		strings.NewReader(`{"action":"decline","correlationId":"card-1"}`))
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Idempotency-Key", "k-1")
	req.Header["Content-Type"] = []string{"application/json", "application/json"}
	rec := httptest.NewRecorder()
	e.mux.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusUnsupportedMediaType, rec.Code, "two Content-Type headers")
	assert.Equal(t, interactions.StatusPending, e.stored().Status, "no refused request answered the card")
}

// Mounted without a method, the handler answers every other method with
// the JSON 405 and Allow: POST. Under a "POST /…" pattern, http.ServeMux
// answers them itself, in plain text, before the handler runs: the reason
// the package documentation mounts it without a method.
func TestMethodNotAllowed(t *testing.T) {
	e := newEnv(t, nil) // mounted without a method
	for _, method := range []string{http.MethodGet, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions} {
		status, header, reply, _ := e.do(request{method: method})
		assert.Equal(t, http.StatusMethodNotAllowed, status, method)
		assert.Equal(t, refusal.CodeMethodNotAllowed, reply.Code, method)
		assert.Equal(t, "POST", header.Get("Allow"), method)
		assert.Equal(t, "application/json", header.Get("Content-Type"), method)
	}
	head := httptest.NewRecorder()
	e.mux.ServeHTTP(head, httptest.NewRequest(http.MethodHead, "/conversations/conv-1/cards/card-1/answer", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, head.Code)
	assert.Equal(t, "POST", head.Header().Get("Allow"))
	assert.Equal(t, interactions.StatusPending, e.stored().Status)

	h, err := answerhttp.NewHandler(e.res, &answerhttp.Options{Caller: func(*http.Request) (interactions.Caller, error) { return alice, nil }})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("POST /conversations/{conversation}/cards/{card}/answer", h)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPut, "/conversations/conv-1/cards/card-1/answer", nil))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	assert.Equal(t, "POST", rec.Header().Get("Allow"))
	assert.True(t, strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain"), "ServeMux's own answer")
	assert.False(t, json.Valid(rec.Body.Bytes()), "not a refusal.Body")
}

// An Idempotency-Key that already answered the card, sent again with
// another body, is idempotency-key-reused, whatever the other body; with
// the same body it is duplicate-answer, and another key is
// already-answered. Nothing refused is written.
func TestIdempotencyKeyReused(t *testing.T) {
	e := newEnv(t, nil)
	status, _, _, _ := e.do(request{})
	require.Equal(t, http.StatusOK, status)
	for name, body := range map[string]string{
		"another value":  `{"action":"submit","correlationId":"card-1","value":{"optionId":"b"}}`,
		"another action": `{"action":"decline","correlationId":"card-1"}`,
		"cancel":         `{"action":"cancel","correlationId":"card-1"}`,
	} {
		status, _, reply, _ := e.do(request{body: body})
		assert.Equal(t, http.StatusUnprocessableEntity, status, name)
		assert.Equal(t, refusal.CodeIdempotencyKeyReused, reply.Code, name)
		assert.Empty(t, reply.Status, "no record with a refusal")
	}
	status, _, reply, _ := e.do(request{key: "k-2", body: `{"action":"submit","correlationId":"card-1","value":{"optionId":"b"}}`})
	assert.Equal(t, http.StatusConflict, status)
	assert.Equal(t, refusal.CodeAlreadyAnswered, reply.Code)
	status, _, reply, _ = e.do(request{})
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, refusal.CodeDuplicateAnswer, reply.Code)
	assert.JSONEq(t, `{"optionId":"a"}`, string(e.stored().Answer.Value))
	assert.Equal(t, int64(2), e.stored().Revision)
}

// stored is the last record of card-1 in the fake database.
func (e *env) stored() interactions.Record {
	e.t.Helper()
	h := e.db.History(cardKey)
	require.NotEmpty(e.t, h)
	return h[len(h)-1]
}
