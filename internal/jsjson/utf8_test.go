package jsjson

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestDecodeUTF8(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"\xef\xbb\xbfbom kept", "\ufeffbom kept"},
		{"\xe2\x82A", "\ufffdA"},
		{"\xed\xa0\x80", "\ufffd\ufffd\ufffd"},
		{"\xf0\x9f\x98", "\ufffd"},
		{"\xf0\x9f\x98\xef\xbb\xbf", "\ufffd\ufeff"},
		{"\xc0\xaf", "\ufffd\ufffd"},
		{"\xf4\x90\x80\x80", "\ufffd\ufffd\ufffd\ufffd"},
		{"\xe0\x80\x80", "\ufffd\ufffd\ufffd"},
		{"\xe0\xa0", "\ufffd"},
		{"\xf1\x80\x80", "\ufffd"},
		{"\xff\xfe", "\ufffd\ufffd"},
	}
	for _, c := range cases {
		got := DecodeUTF8([]byte(c.in))
		assert.Equal(t, c.want, string(got), "%q", c.in)
		assert.True(t, utf8.Valid(got))
	}
}

func TestSurrogateForm(t *testing.T) {
	for u := rune(0xD800); u <= 0xDFFF; u++ {
		b := appendSurrogate(nil, u)
		got, ok := surrogateAt(b)
		assert.True(t, ok)
		assert.Equal(t, u, got)
		assert.False(t, utf8.Valid(b))
	}
	_, ok := surrogateAt("\xed\x9f\xbf") // U+D7FF, a valid character
	assert.False(t, ok)
}
