package strictjson

import (
	"slices"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// AppendString appends s as a JSON string in its minimal form (RFC 8785
// section 3.2.2.2), byte for byte what jsontext.AppendQuote writes: '"'
// and '\' escaped with a backslash, the control characters U+0000 to
// U+001F as \b, \t, \n, \f, \r or \u00xx (lower-case hex), everything else
// as it is. Invalid UTF-8 is an error, jsontext.AppendQuote's own.
//
// It reads s eight bytes at a time while they need no escape, and copies
// the runs between escapes in bulk; on the text of a chat (mostly ASCII,
// few escapes) that is several times faster than a byte-at-a-time loop.
func AppendString(dst []byte, s string) ([]byte, error) {
	orig := len(dst)
	dst = slices.Grow(dst, len(s)+2)
	dst = append(dst, '"')
	start := 0 // the first byte not yet copied
	for i := 0; i < len(s); {
		i += PlainPrefix(s[i:])
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

// CheckString returns the error AppendString would return for s, nil for
// valid UTF-8, without writing anything.
func CheckString(s string) error {
	if utf8.ValidString(s) {
		return nil
	}
	_, err := AppendString(nil, s)
	return err
}

// The SWAR constants of plain8: one in every byte, and the top bit of
// every byte.
const (
	ones = 0x0101010101010101
	tops = 0x8080808080808080
)

// PlainPrefix returns the length of the longest prefix of s, in whole
// words of 8 bytes, that holds no control character, '"', '\\' or byte
// above 0x7f: the bytes a scanner of JSON string content may pass over
// without a look, because none of them ends the string, starts an escape,
// is refused, or starts a UTF-8 sequence to check. It reads 8 bytes at a
// time.
func PlainPrefix[T ~string | ~[]byte](s T) int {
	i := 0
	for i+8 <= len(s) && plain(load8(s[i:])) {
		i += 8
	}
	return i
}

// load8 reads the first 8 bytes of s as a little-endian word (one load).
func load8[T ~string | ~[]byte](s T) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plain reports whether none of the 8 bytes of x needs a look: no control
// character, '"', '\' or byte of a multi-byte UTF-8 sequence. It may
// report false for bytes that need none (the caller then looks at them one
// by one), never true for bytes that do. The bit tricks: (x-n*ones)&^x
// marks the top bit of a byte below n (exactly, for n <= 0x80, when no
// byte is above 0x7f), so n = 1 finds a zero byte of x^('"'*ones), a
// quote; x's own top bits mark the bytes above 0x7f.
func plain(x uint64) bool {
	q, b := x^('"'*ones), x^('\\'*ones)
	return ((x-0x20*ones)&^x|(q-ones)&^q|(b-ones)&^b|x)&tops == 0
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
