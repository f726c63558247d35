package answerhttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/answerhttp"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/slowbody"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// A body is JSON: no Content-Type (with the Idempotency-Key, which takes
// a CORS preflight), or application/json with any parameters and a
// charset only if utf-8, in any case. Anything else is
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
	status, _, reply, _ := e.do(request{key: "-"})
	assert.Equal(t, http.StatusUnsupportedMediaType, status, "no Content-Type and no Idempotency-Key")
	assert.Equal(t, refusal.CodeUnsupportedMediaType, reply.Code)
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

	h, err := answerhttp.NewHandler(e.res, &answerhttp.HandlerOptions{Caller: func(*http.Request) (interactions.Caller, error) { return alice, nil }})
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

// What a page of another site can make a browser send with the user's
// cookies and without a CORS preflight (a form's three types, or none
// without the Idempotency-Key a form cannot set) is refused before the
// body is read, and answers nothing (docs/contract.md section 12.6).
func TestACrossSiteFormAnswersNothing(t *testing.T) {
	e := newEnv(t, nil)
	for _, c := range []struct{ ctype, key string }{
		{"application/x-www-form-urlencoded", "-"}, {"text/plain", "-"}, {"multipart/form-data; boundary=x", "-"}, {"", "-"},
		{"text/plain", ""}, // a preflighted request with a form's type: still not JSON
	} {
		body := slowbody.NewNever(t)
		status, _, reply, raw := e.do(request{ctype: c.ctype, key: c.key, reader: body})
		assert.Equal(t, http.StatusUnsupportedMediaType, status, "%+v: %s", c, raw)
		assert.Equal(t, refusal.CodeUnsupportedMediaType, reply.Code, "%+v", c)
		assert.False(t, body.WasRead(), "%+v", c)
	}
	body := slowbody.NewNever(t)
	status, _, reply, _ := e.do(request{who: "mallory", ctype: "application/json", reader: body})
	assert.Equal(t, http.StatusUnauthorized, status, "no session")
	assert.Equal(t, refusal.CodeUnauthenticated, reply.Code)
	assert.False(t, body.WasRead(), "no session: the body is not read")
	assert.Equal(t, interactions.StatusPending, e.stored().Status, "a refused request answered the card")
}

// A body that another reader would read as another answer (a name twice,
// or two names of one object that differ only by case, wherever they are)
// is invalid-card at the name's pointer, and answers nothing.
func TestNamesAreReadInOneWayOnly(t *testing.T) {
	e := newEnv(t, nil)
	for body, path := range map[string]string{
		`{"action":"submit","correlationId":"card-1","value":{"optionId":"a"},"action":"decline"}`:        "/action",
		`{"action":"submit","correlationId":"card-1","value":{"optionId":"a"},"Action":"decline"}`:        "/Action",
		`{"action":"submit","correlationId":"card-1","value":{"optionId":"a","OptionId":"b"}}`:            "/value/OptionId",
		`{"action":"submit","correlationId":"card-1","value":{"optionId":"a"},"meta":{"x":1,"X":2}}`:      "/meta/X",
		`{"action":"submit","correlationId":"card-1","value":{"optionId":"a"},"extra":1,"EXTRA":2}`:       "/EXTRA",
		`{"action":"submit","correlationId":"card-1","value":{"optionId":"a"},"note":{"\u212a":1,"k":2}}`: "/note/k",
	} {
		status, _, reply, raw := e.do(request{body: body})
		assert.Equal(t, http.StatusBadRequest, status, "%s: %s", body, raw)
		assert.Equal(t, refusal.CodeInvalidCard, reply.Code, body)
		assert.Equal(t, path, reply.Path, body)
	}
	assert.Equal(t, interactions.StatusPending, e.stored().Status)
}

// A body over MaxBodyBytes is frame-too-large; one that stalls one byte
// short of its length is cut by BodyTimeout, unreadable-body; neither
// answers the card.
func TestTheBodyIsBounded(t *testing.T) {
	e := newEnv(t, &answerhttp.HandlerOptions{MaxBodyBytes: 80, BodyTimeout: 100 * time.Millisecond})
	status, _, reply, _ := e.do(request{body: `{"action":"submit","correlationId":"card-1","value":{"optionId":"` + strings.Repeat("a", 80) + `"}}`})
	assert.Equal(t, http.StatusRequestEntityTooLarge, status)
	assert.Equal(t, refusal.CodeFrameTooLarge, reply.Code)

	srv := httptest.NewServer(e.mux)
	defer srv.Close()
	resp := slowbody.Stall(t, srv.Listener.Addr().String(), "/conversations/conv-1/cards/card-1/answer",
		"Authorization: Bearer alice\r\nIdempotency-Key: k-1\r\nContent-Type: application/json\r\n", `{"action":"submit","correlationId":"card-1","value":{"optionId":"a"}`)
	var got refusal.Body
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	resp.Body.Close()
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, refusal.CodeUnreadableBody, got.Code)
	assert.Equal(t, interactions.StatusPending, e.stored().Status)
}
