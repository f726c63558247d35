package replay

import (
	"strings"
	"testing"
	"unicode/utf8"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// FuzzSplitDelta: for any text and any limit with room for a character,
// SplitDelta never panics, refuses exactly invalid UTF-8, and otherwise
// cuts pieces between characters that concatenate to the text, each
// fitting, as a delta envelope at the largest seq, under the limit, each
// but the last unable to take one more character. The committed corpus is
// in testdata/fuzz/FuzzSplitDelta.
func FuzzSplitDelta(f *testing.F) {
	f.Add("hello", uint16(0))
	f.Add("\x00\x1f\"\\\n😀é漢", uint16(3))
	empty, err := pieceEnvelope(splitTemplate, "", chatprotocol.MaxSeq).AppendJSON(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, text string, room uint16) {
		limit := len(empty) + maxEscapedRune + int(room%512)
		pieces, err := SplitDelta(&splitTemplate, text, limit)
		if !utf8.ValidString(text) {
			if refusal.CodeOf(err) != refusal.CodeInvalidEvent {
				t.Fatalf("invalid UTF-8: %v, want invalid-event", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(pieces, ""); got != text {
			t.Fatalf("pieces concatenate to %q, want %q", got, text)
		}
		for i, p := range pieces {
			if p == "" || !utf8.ValidString(p) {
				t.Fatalf("piece %d %q is empty or cut inside a character", i, p)
			}
			data, err := pieceEnvelope(splitTemplate, p, chatprotocol.MaxSeq).AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) > limit {
				t.Fatalf("piece %d is a %d-byte frame, over the limit %d", i, len(data), limit)
			}
			if i+1 < len(pieces) {
				_, size := utf8.DecodeRuneInString(pieces[i+1])
				more, err := pieceEnvelope(splitTemplate, p+pieces[i+1][:size], chatprotocol.MaxSeq).AppendJSON(nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(more) <= limit {
					t.Fatalf("piece %d could hold one more character", i)
				}
			}
		}
	})
}
