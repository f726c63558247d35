package jsjson

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAppendString(t *testing.T) {
	cases := []struct {
		in         string
		want, html string
	}{
		{"plain", `"plain"`, `"plain"`},
		{"<a & b>", `"<a & b>"`, `"\u003ca \u0026 b\u003e"`},
		{"\u2028\u2029\x7f", "\"\u2028\u2029\x7f\"", "\"\u2028\u2029\x7f\""},
		{"\"\\\b\f\n\r\t\x00\x1f", `"\"\\\b\f\n\r\t\u0000\u001f"`, `"\"\\\b\f\n\r\t\u0000\u001f"`},
		{"\xed\xa0\x80", `"\ud800"`, `"\ud800"`},
		{"a\xed\xb0\x80b", `"a\udc00b"`, `"a\udc00b"`},
		{"\xed\xa0\xbd\xed\xb8\x80", "\"\U0001F600\"", "\"\U0001F600\""},
		{"\xed\xb8\x80\xed\xa0\xbd", `"\ude00\ud83d"`, `"\ude00\ud83d"`},
		{"\xe2\x82A\xff", "\"\ufffdA\ufffd\"", "\"\ufffdA\ufffd\""},
		{"é😀", "\"é😀\"", "\"é😀\""},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, string(AppendString(nil, c.in, false)), "%q", c.in)
		assert.Equal(t, c.html, string(AppendString(nil, c.in, true)), "%q", c.in)
	}
}

func TestAppendStringRoundTrip(t *testing.T) {
	for _, s := range []string{"x\xed\xa0\x80y", "\U0010FFFF", "<\u2028>", "\x00\x01"} {
		v, ok := Parse(AppendString(nil, s, true))
		assert.True(t, ok)
		assert.Equal(t, s, v)
	}
}

func TestAppendNumber(t *testing.T) {
	cases := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {math.Copysign(0, -1), "0"}, {1, "1"}, {-1.5, "-1.5"}, {0.0041, "0.0041"},
		{1e21, "1e+21"}, {1.5e21, "1.5e+21"}, {1e20, "100000000000000000000"},
		{1e-6, "0.000001"}, {1e-7, "1e-7"}, {1.5e-7, "1.5e-7"}, {5e-324, "5e-324"},
		{1.7976931348623157e308, "1.7976931348623157e+308"}, {123456789012, "123456789012"},
		{math.Inf(1), "null"}, {math.NaN(), "null"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, string(AppendNumber(nil, c.in)), "%v", c.in)
	}
}
