package jsjson

import (
	"encoding/json"
	"os"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIsSpaceMatchesECMAScript checks every code point against the set
// Node's String.prototype.trim removes (testdata/es-whitespace.json).
func TestIsSpaceMatchesECMAScript(t *testing.T) {
	data, err := os.ReadFile("testdata/es-whitespace.json")
	require.NoError(t, err)
	var list []rune
	require.NoError(t, json.Unmarshal(data, &list))
	want := map[rune]bool{}
	for _, r := range list {
		want[r] = true
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xD800 && r <= 0xDFFF {
			continue
		}
		if IsSpace(r) != want[r] {
			t.Errorf("IsSpace(%U) = %v, ECMAScript trims it: %v", r, IsSpace(r), want[r])
		}
	}
	assert.True(t, IsSpace(0xFEFF))
	assert.False(t, IsSpace(0x85))
	assert.True(t, unicode.IsSpace(0x85), "the difference this function exists for")
}

func TestTrim(t *testing.T) {
	cases := []struct{ in, want string }{
		{"  x  ", "x"},
		{"\ufeff\u00a0\u3000x\u2028\u2029", "x"},
		{"\u0085x\u0085", "\u0085x\u0085"},
		{"\u200bx", "\u200bx"},
		{"\t\n tabbed \r\n", "tabbed"},
		{"   ", ""},
		{"", ""},
		{"\xff \xff", "\xff \xff"},
		{" \xed\xa0\x80 ", "\xed\xa0\x80"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Trim(c.in), "%q", c.in)
	}
}
