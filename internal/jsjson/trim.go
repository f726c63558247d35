package jsjson

import "unicode/utf8"

// IsSpace reports whether r is removed by ECMAScript String.prototype.trim:
// the WhiteSpace and LineTerminator code points of ECMA-262 (tab, VT, FF,
// space, U+00A0, U+FEFF, the other Zs space separators U+1680, U+2000 to
// U+200A, U+202F, U+205F, U+3000, and LF, CR, U+2028, U+2029). It differs
// from [unicode.IsSpace], which keeps U+FEFF and removes U+0085.
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0x00A0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// Trim returns s without the leading and trailing characters that
// String.prototype.trim removes (see [IsSpace]). Bytes that are not valid
// UTF-8 are never whitespace.
func Trim(s string) string {
	return TrimRight(TrimLeft(s))
}

// TrimLeft returns s without its leading ECMAScript whitespace.
func TrimLeft(s string) string {
	for len(s) > 0 {
		if c := s[0]; c < utf8.RuneSelf {
			if !IsSpace(rune(c)) {
				return s
			}
			s = s[1:]
			continue
		}
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError || !IsSpace(r) {
			return s
		}
		s = s[size:]
	}
	return s
}

// TrimRight returns s without its trailing ECMAScript whitespace.
func TrimRight(s string) string {
	for len(s) > 0 {
		if c := s[len(s)-1]; c < utf8.RuneSelf {
			if !IsSpace(rune(c)) {
				return s
			}
			s = s[:len(s)-1]
			continue
		}
		r, size := utf8.DecodeLastRuneInString(s)
		if r == utf8.RuneError || !IsSpace(r) {
			return s
		}
		s = s[:len(s)-size]
	}
	return s
}
