package chatprotocol

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// FuzzParseCardResponse checks that ParseCardResponse never panics, refuses
// only with invalid-card or frame-too-large, and that what it accepts is a
// response ValidateCardResponse passes, that encoding/json reads to the
// same value (strictness refuses inputs, it never changes a meaning), and
// that its encoding/json form reads back as the same response.
func FuzzParseCardResponse(f *testing.F) {
	for _, c := range cardResponseAccepted {
		f.Add([]byte(c.in))
	}
	for _, c := range cardResponseRefused {
		if c.code != refusal.CodeFrameTooLarge {
			f.Add([]byte(c.in))
		}
	}
	for _, s := range []string{
		`{"type":"submit","action":"submit","correlationId":"c","value":{}}`,
		`{"action\u0000":"submit","action":"cancel","correlationId":"c"}`,
		"\ufeff{\"action\":\"cancel\",\"correlationId\":\"c\"}",
		`{"action":"submit","correlationId":"c","value":{"\u212a":1,"k":2}}`,
		`{"action":"submit","correlationId":"c","value":{"a":1e400}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		resp, err := ParseCardResponse(in)
		if err != nil {
			if code := refusal.CodeOf(err); code != refusal.CodeInvalidCard && code != refusal.CodeFrameTooLarge {
				t.Fatalf("ParseCardResponse(%q): %v", in, err)
			}
			return
		}
		if err := ValidateCardResponse(resp); err != nil {
			t.Fatalf("ParseCardResponse(%q) accepted what ValidateCardResponse refuses: %v", in, err)
		}
		var loose cards.CardResponse
		if err := json.Unmarshal(in, &loose); err != nil {
			t.Fatalf("encoding/json refuses %q, which ParseCardResponse accepted: %v", in, err)
		}
		if loose.Action != resp.Action || loose.CorrelationID != resp.CorrelationID || !bytes.Equal(loose.Value, resp.Value) {
			t.Fatalf("%q: encoding/json reads %+v, ParseCardResponse %+v", in, loose, resp)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // keep the value's strings as sent, for the comparison below
		if err := enc.Encode(resp); err != nil {
			t.Fatalf("cannot encode %+v: %v", resp, err)
		}
		out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		again, err := ParseCardResponse(out)
		if err != nil {
			t.Fatalf("%q does not read back: %v", out, err)
		}
		var compact bytes.Buffer
		if resp.Value != nil {
			if err := json.Compact(&compact, resp.Value); err != nil {
				t.Fatal(err)
			}
		}
		if again.Action != resp.Action || again.CorrelationID != resp.CorrelationID || !bytes.Equal(again.Value, compact.Bytes()) && again.Value != nil {
			t.Fatalf("%q read back as %+v, not %+v", out, again, resp)
		}
	})
}
