package jsjson

import "unicode/utf8"

// decodeRune decodes the first character of s as the WHATWG UTF-8 decoder
// does: a well-formed sequence gives its rune, and an ill-formed one gives
// utf8.RuneError with size equal to its maximal subpart (the lead byte and
// the continuation bytes that were still acceptable), at least 1. Go's
// utf8.DecodeRune reports size 1 for every ill-formed sequence, which would
// turn "\xE2\x82A" into two U+FFFD where a browser shows one.
func decodeRune[T ~string | ~[]byte](s T) (rune, int) {
	if len(s) == 0 {
		return utf8.RuneError, 0
	}
	var r rune
	var size int
	switch v := any(s).(type) {
	case string:
		r, size = utf8.DecodeRuneInString(v)
	case []byte:
		r, size = utf8.DecodeRune(v)
	default:
		r, size = utf8.DecodeRuneInString(string(s))
	}
	if r != utf8.RuneError || size != 1 {
		return r, size
	}
	return utf8.RuneError, maximalSubpart(s)
}

// maximalSubpart returns the length of the ill-formed sequence at the start
// of s that the WHATWG decoder replaces with one U+FFFD. s must start with a
// byte that does not begin a well-formed sequence.
func maximalSubpart[T ~string | ~[]byte](s T) int {
	b0 := s[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case b0 >= 0xC2 && b0 <= 0xDF:
		need = 1
	case b0 == 0xE0:
		need, lo = 2, 0xA0
	case b0 >= 0xE1 && b0 <= 0xEC, b0 == 0xEE, b0 == 0xEF:
		need = 2
	case b0 == 0xED:
		need, hi = 2, 0x9F
	case b0 == 0xF0:
		need, lo = 3, 0x90
	case b0 >= 0xF1 && b0 <= 0xF3:
		need = 3
	case b0 == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for i := 0; i < need && n < len(s); i++ {
		c := s[n]
		if c < lo || c > hi {
			break
		}
		n++
		lo, hi = 0x80, 0xBF
	}
	return n
}

// DecodeUTF8 returns data as a TextDecoder("utf-8", {ignoreBOM: true})
// would decode it, re-encoded as UTF-8: every ill-formed sequence is
// replaced by U+FFFD (one per maximal subpart) and a byte order mark is
// kept as U+FEFF. When data is already valid UTF-8 it is returned as is,
// without a copy.
func DecodeUTF8(data []byte) []byte {
	if utf8.Valid(data) {
		return data
	}
	out := make([]byte, 0, len(data)+8)
	for i := 0; i < len(data); {
		if data[i] < utf8.RuneSelf {
			out = append(out, data[i])
			i++
			continue
		}
		r, size := decodeRune(data[i:])
		out = utf8.AppendRune(out, r)
		i += size
	}
	return out
}

// appendSurrogate appends the three-byte generalized UTF-8 (WTF-8) form of
// the lone UTF-16 surrogate u (0xD800-0xDFFF).
func appendSurrogate(dst []byte, u rune) []byte {
	return append(dst, 0xE0|byte(u>>12), 0x80|byte(u>>6)&0x3F, 0x80|byte(u)&0x3F)
}

// surrogateAt reports the lone surrogate whose WTF-8 form starts s, if any.
func surrogateAt[T ~string | ~[]byte](s T) (rune, bool) {
	if len(s) < 3 || s[0] != 0xED || s[1] < 0xA0 || s[1] > 0xBF || s[2] < 0x80 || s[2] > 0xBF {
		return 0, false
	}
	return rune(s[0]&0x0F)<<12 | rune(s[1]&0x3F)<<6 | rune(s[2]&0x3F), true
}
