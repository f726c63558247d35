package chatprotocol

import (
	"bytes"
	"testing"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// FuzzParseChatCapabilities checks that ParseChatCapabilities never panics,
// refuses only with invalid-envelope or invalid-event, and that what it
// accepts marshals to a declaration it reads back as the same one, whose
// form is a fixed point.
func FuzzParseChatCapabilities(f *testing.F) {
	all := `{"connectionReplay":true,"persistedHistory":false,"persistedDecisions":false,"completedToolCheckpoints":false,"interruptedTurnRecovery":false`
	for _, s := range []string{all + "}", all + `,"future":{"x":[1]}}`, all + `,"ConnectionReplay":true}`, all + `,"connectionReplay":false}`,
		`{"connectionReplay":true}`, all + `,"persistedHistory":null}`, all + "}x", "\ufeff" + all + "}", all + `,"\u212aelvin":1}`, "[]", "", "null"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := ParseChatCapabilities(in)
		if err != nil {
			if code := refusal.CodeOf(err); code != refusal.CodeInvalidEnvelope && code != refusal.CodeInvalidEvent {
				t.Fatalf("ParseChatCapabilities(%q): %v", in, err)
			}
			return
		}
		out, err := c.MarshalJSON()
		if err != nil {
			t.Fatalf("ParseChatCapabilities(%q) accepted what MarshalJSON refuses: %v", in, err)
		}
		again, err := ParseChatCapabilities(out)
		if err != nil {
			t.Fatalf("%q does not read back: %v", out, err)
		}
		out2, err := again.MarshalJSON()
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("not a fixed point: %q then %q (%v)", out, out2, err)
		}
	})
}
