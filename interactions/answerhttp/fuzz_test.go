package answerhttp_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// FuzzHandler: whatever the body, the Idempotency-Key and the
// Content-Type, the handler answers one refusal.Body whose status is the
// one table's for its code (200 for a stored answer), and never panics.
func FuzzHandler(f *testing.F) {
	f.Add("k-1", "", `{"action":"submit","correlationId":"card-1","value":{"optionId":"a"}}`)
	f.Add("k-1", "application/json", `{"action":"decline","correlationId":"card-1"}`)
	f.Add("", "", `{"action":"cancel","correlationId":"card-1"}`)
	f.Add("k-2", "", `{"ACTION":"submit","correlationId":"card-1","value":{}}`)
	f.Add("k-3", "", `{"action":"submit","correlationId":"card-1","value":{"optionId":"z","optionId":"a"}}`)
	f.Add("k-4", "", "{\"action\":\"submit\",\"correlationId\":\"card-1\",\"value\":{\"optionId\":\"\xff\"}}")
	f.Add(strings.Repeat("k", 257), "", `{"action":"cancel","correlationId":"card-1"}`)
	f.Add("k-5", "", `[`)
	f.Add("k-6", "text/plain", `{"action":"decline","correlationId":"card-1"}`)
	f.Add("k-7", "application/json; charset=latin1", `{"action":"decline","correlationId":"card-1"}`)
	f.Add("k-8", "application/json;;", `{"action":"decline","correlationId":"card-1"}`)
	f.Add("k-9", "", `{"action":"submit","correlationId":"card-1","value":{"optionId":"a"},"x":{"k":1,"\u212a":2}}`)
	f.Fuzz(func(t *testing.T, key, ctype, body string) {
		e := newEnv(t, nil)
		req := httptest.NewRequest(http.MethodPost, "/conversations/conv-1/cards/card-1/answer", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer alice")
		if key != "" && !strings.ContainsAny(key, "\r\n\x00") {
			req.Header.Set("Idempotency-Key", key)
		}
		if ctype != "" && !strings.ContainsAny(ctype, "\r\n\x00") {
			req.Header.Set("Content-Type", ctype)
		}
		rec := httptest.NewRecorder()
		e.mux.ServeHTTP(rec, req)
		var reply refusal.Body
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &reply), "%q", rec.Body.String())
		want := http.StatusOK
		if reply.Code != "" {
			want = refusal.HTTPStatus(reply.Code)
			require.Contains(t, refusal.Codes(), reply.Code, "a code of the module")
		}
		require.Equal(t, want, rec.Code, "%q", rec.Body.String())
		require.NotEmpty(t, reply.Message)
	})
}
