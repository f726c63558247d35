package uistream

import (
	"testing"
	"unicode/utf8"
)

// FuzzParseRequest: any body either parses into a request whose chat id is
// a valid id and whose trigger is one of the two, keeping the body, or is
// refused; it never panics. The seeds are the shapes the clients send and
// the known attacks on a JSON reader.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"id":"chat-1","messages":[],"trigger":"submit-message"}`,
		`{"id":"chat-1","messages":[{"role":"user","parts":[{"type":"text","text":"hi"}]}],"trigger":"submit-message","messageId":"m-1"}`,
		`{"id":"chat-1","messages":[],"trigger":"regenerate-message","answer":{"submissionId":"s-1","response":{"action":"submit","correlationId":"c","value":{"optionId":"yes"}}}}`,
		`{"id":"a","id":"b","messages":[],"trigger":"submit-message"}`,
		`{"ID":"a","MESSAGES":[],"TRIGGER":"submit-message"}`,
		"{\"id\":\"\xff\",\"messages\":[],\"trigger\":\"submit-message\"}",
		`{"id":"a","messages":{},"trigger":"submit-message"}`,
		`{"id":"a","messages":[],"trigger":"submit-message"} {}`,
		`{"id":"chat-1","messages":[{"id":"a1","role":"assistant","parts":[{"type":"tool-card","toolCallId":"k","state":"approval-responded","approval":{"id":"k","approved":true}}]}],"trigger":"submit-message"}`,
		`[]`, `null`, ``, `{"id":"\ud800","messages":[],"trigger":"submit-message"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseRequest(body, true)
		if err != nil {
			return
		}
		for _, r := range req.replies {
			if r.id == "" || !utf8.ValidString(r.id) {
				t.Fatalf("accepted the card reply %+v of %q", r, body)
			}
		}
		if req.ChatID == "" || !utf8.ValidString(req.ChatID) || string(req.Body) != string(body) {
			t.Fatalf("accepted %q as chat %q", body, req.ChatID)
		}
		if req.Trigger != "submit-message" && req.Trigger != "regenerate-message" {
			t.Fatalf("accepted trigger %q", req.Trigger)
		}
	})
}
