package answerhttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions/answerhttp"
)

// FuzzHandler: whatever the body and the Idempotency-Key, the handler
// answers one Reply whose status is StatusOf its code, and never panics.
func FuzzHandler(f *testing.F) {
	f.Add("k-1", `{"action":"submit","correlationId":"card-1","value":{"optionId":"a"}}`)
	f.Add("k-1", `{"action":"decline","correlationId":"card-1"}`)
	f.Add("", `{"action":"cancel","correlationId":"card-1"}`)
	f.Add("k-2", `{"ACTION":"submit","correlationId":"card-1","value":{}}`)
	f.Add("k-3", `{"action":"submit","correlationId":"card-1","value":{"optionId":"z","optionId":"a"}}`)
	f.Add("k-4", "{\"action\":\"submit\",\"correlationId\":\"card-1\",\"value\":{\"optionId\":\"\xff\"}}")
	f.Add(strings.Repeat("k", 257), `{"action":"cancel","correlationId":"card-1"}`)
	f.Add("k-5", `[`)
	f.Fuzz(func(t *testing.T, key, body string) {
		e := newEnv(t, nil)
		req := httptest.NewRequest(http.MethodPost, "/conversations/conv-1/cards/card-1/answer", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer alice")
		if key != "" && !strings.ContainsAny(key, "\r\n\x00") {
			req.Header.Set("Idempotency-Key", key)
		}
		rec := httptest.NewRecorder()
		e.mux.ServeHTTP(rec, req)
		var reply answerhttp.Reply
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &reply), "%q", rec.Body.String())
		require.Equal(t, answerhttp.StatusOf(reply.Code), rec.Code, "%q", rec.Body.String())
		require.NotEmpty(t, reply.Message)
	})
}
