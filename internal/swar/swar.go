// Package swar finds, 8 bytes at a time, the bytes of a JSON string's
// content that a scanner must look at one by one: the end quote, an
// escape, a control character (refused) or the first byte of a UTF-8
// sequence (to check or decode). It reads each 8 bytes as one word and
// tests them with bit arithmetic (SIMD within a register), so that plain
// text costs about one test per 8 bytes. The JSON scanners of the module
// share it: strictjson's string encoder, jsjson's string reader and the
// legacy decoder's fast path.
package swar

// The constants of the word tests: one in every byte, and the top bit of
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

// ASCIIPrefix returns the length of the longest prefix of s made of ASCII
// bytes (below 0x80), reading 8 bytes at a time: a UTF-8 check has only
// the rest to look at.
func ASCIIPrefix[T ~string | ~[]byte](s T) int {
	i := 0
	for i+8 <= len(s) && load8(s[i:])&tops == 0 {
		i += 8
	}
	if i+8 > len(s) && i < len(s) && len(s) >= 8 && load8(s[len(s)-8:])&tops == 0 {
		return len(s) // fewer than 8 left: read the last 8, over the words passed
	}
	for i < len(s) && s[i] < 0x80 {
		i++
	}
	return i
}
