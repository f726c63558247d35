package swar

import (
	"strings"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update

	"github.com/stretchr/testify/assert"
)

// needsLook reports whether a JSON string scanner must look at c.
func needsLook(c byte) bool { return c < 0x20 || c == '"' || c == '\\' || c >= 0x80 }

func TestPlain(t *testing.T) {
	assert.True(t, plain(load8("abcdefgh")))
	assert.True(t, plain(load8(" ~!#$%&'")))
	assert.True(t, plain(load8("\x7f\x7f\x7f\x7f\x7f\x7f\x7f\x7f")))
	for _, c := range []byte{0, 0x1f, '"', '\\', 0x80, 0xc3, 0xff} {
		for i := range 8 {
			b := []byte("abcdefgh")
			b[i] = c
			assert.False(t, plain(load8(b)), "%q", b)
		}
	}
}

func TestPlainPrefix(t *testing.T) {
	assert.Equal(t, 0, PlainPrefix("short"))
	assert.Equal(t, 8, PlainPrefix("abcdefgh"))
	assert.Equal(t, 8, PlainPrefix("abcdefghijk"))
	assert.Equal(t, 16, PlainPrefix([]byte(strings.Repeat("x", 16)+`\`+strings.Repeat("x", 16))))
	assert.Equal(t, 0, PlainPrefix(`abc"defgh`))
}

func TestASCIIPrefix(t *testing.T) {
	assert.Equal(t, 0, ASCIIPrefix(""))
	assert.Equal(t, 5, ASCIIPrefix("gen-1"))
	assert.Equal(t, 20, ASCIIPrefix("0123456789abcdefghij"))
	assert.Equal(t, 2, ASCIIPrefix("naïve"))
	assert.Equal(t, 17, ASCIIPrefix([]byte("0123456789abcdefg\x80")))
}

// FuzzPlainPrefix checks that no byte PlainPrefix passes over needs a
// look, and that it stops only at 8 bytes of which one does.
func FuzzPlainPrefix(f *testing.F) {
	for _, s := range []string{"", "abcdefgh", "naïve 👟 text of some length", "0123456\x01abc", `a"b\c` + "\nd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := PlainPrefix(s)
		if n%8 != 0 || n > len(s) {
			t.Fatalf("PlainPrefix(%q) = %d", s, n)
		}
		for i := range n {
			if needsLook(s[i]) {
				t.Fatalf("PlainPrefix(%q) = %d passes over %q at %d", s, n, s[i], i)
			}
		}
		if a := ASCIIPrefix(s); a > len(s) || strings.ContainsFunc(s[:a], func(r rune) bool { return r >= 0x80 }) || (a < len(s) && s[a] < 0x80) {
			t.Fatalf("ASCIIPrefix(%q) = %d", s, a)
		}
		if n+8 <= len(s) && !strings.ContainsFunc(s[n:n+8], func(r rune) bool { return r >= 0x80 || needsLook(byte(r)) }) {
			t.Fatalf("PlainPrefix(%q) = %d stops before 8 plain bytes", s, n)
		}
	})
}
