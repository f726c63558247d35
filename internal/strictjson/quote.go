package strictjson

import (
	"slices"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/Papercusp/chat-protocol-go/internal/swar"
)

// AppendString appends s as a JSON string in its minimal form (RFC 8785
// docs/contract.md section 3.2.2.2), byte for byte what [jsontext.AppendQuote]
// writes: '"' and '\' escaped with a backslash, the control characters U+0000
// to U+001F as \b, \t, \n, \f, \r or \u00xx (lower-case hex), everything else
// as it is. Invalid UTF-8 is an error, [jsontext.AppendQuote]'s own.
//
// It reads s eight bytes at a time while they need no escape
// ([swar.PlainPrefix]), and copies
// the runs between escapes in bulk; on the text of a chat (mostly ASCII,
// few escapes) that is several times faster than a byte-at-a-time loop.
func AppendString(dst []byte, s string) ([]byte, error) {
	orig := len(dst)
	dst = slices.Grow(dst, len(s)+2)
	dst = append(dst, '"')
	start := 0 // the first byte not yet copied
	for i := 0; i < len(s); {
		i += swar.PlainPrefix(s[i:])
		// Some of the next 8 bytes need a look: look at them one by one.
		for end := min(i+8, len(s)); i < end; {
			switch c := s[i]; {
			case c >= utf8.RuneSelf:
				r, n := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError && n == 1 {
					return jsontext.AppendQuote(dst[:orig], s) // its error, and what it writes with it
				}
				i += n
			case c < 0x20 || c == '"' || c == '\\':
				dst = append(dst, s[start:i]...)
				dst = appendEscaped(dst, c)
				i++
				start = i
			default:
				i++
			}
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), nil
}

// AppendStringBody appends what [AppendString] would write between the
// quotes: s escaped. Since every escape is of one byte or one rune, the
// bodies of the pieces of a string cut between runes add up to the body of
// the whole, so a long string can be written piece by piece (see
// ChatStateV1.WriteJSON). Invalid UTF-8 is [AppendString]'s error, with dst
// returned unchanged. It costs [AppendString] and a copy of the piece.
func AppendStringBody(dst []byte, s string) ([]byte, error) {
	orig := len(dst)
	out, err := AppendString(dst, s)
	if err != nil {
		return dst[:orig], err
	}
	n := copy(out[orig:], out[orig+1:len(out)-1]) // drop the quotes
	return out[:orig+n], nil
}

// CheckString returns the error [AppendString] would return for s, nil for
// valid UTF-8, without writing anything. ASCII is passed 8 bytes at a time
// ([swar.ASCIIPrefix]), and only the rest goes to [utf8.ValidString].
func CheckString(s string) error {
	if n := swar.ASCIIPrefix(s); n == len(s) || utf8.ValidString(s[n:]) {
		return nil
	}
	_, err := AppendString(nil, s)
	return err
}

// appendEscaped appends the escape of an ASCII byte that needs one.
func appendEscaped(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}
