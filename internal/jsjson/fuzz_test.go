package jsjson

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParse compares Parse with encoding/json where they must agree: the
// same texts are JSON (below encoding/json's depth limit), and on valid
// UTF-8 without lone surrogates or out-of-range numbers the same values.
// It also checks that AppendValue writes what Parse reads back.
func FuzzParse(f *testing.F) {
	for _, c := range readGolden(f) {
		in, _ := hex.DecodeString(c.Hex)
		if len(in) < 4096 {
			f.Add(in)
		}
	}
	for _, s := range []string{`{"type":"x","TYPE":"y","typeſ":"z","type\u0000":"w"}`, `{"a":1,"a":2}`, "\xef\xbb\xbf{}", `"\ud800"`, `1e400`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		v, ok := Parse(in)
		if ok != Valid(in) {
			t.Fatalf("Parse and Valid disagree on %q", in)
		}
		if depth(in) < 9000 && ok != json.Valid(in) {
			t.Fatalf("Parse ok=%v, encoding/json Valid=%v on %q", ok, json.Valid(in), in)
		}
		if !ok {
			return
		}
		out := AppendValue(nil, v)
		if v2, ok := Parse(out); !ok || !bytes.Equal(AppendValue(nil, v2), out) {
			t.Fatalf("AppendValue output %q does not read back", out)
		}
		if !utf8.Valid(in) || !allValidStrings(v) {
			return
		}
		var want any
		if err := json.Unmarshal(in, &want); err != nil {
			return // out-of-range number: encoding/json refuses, JSON.parse does not
		}
		if got, w := AppendValue(nil, v), AppendValue(nil, want); !bytes.Equal(got, w) {
			t.Fatalf("Parse %s, encoding/json %s on %q", got, w, in)
		}
	})
}

// depth is an upper bound of the nesting depth of in.
func depth(in []byte) int {
	return strings.Count(string(in), "[") + strings.Count(string(in), "{")
}

func allValidStrings(v any) bool {
	switch v := v.(type) {
	case string:
		return utf8.ValidString(v)
	case []any:
		for _, e := range v {
			if !allValidStrings(e) {
				return false
			}
		}
	case map[string]any:
		for k, e := range v {
			if !utf8.ValidString(k) || !allValidStrings(e) {
				return false
			}
		}
	}
	return true
}

// FuzzUnquotePrefix compares UnquotePrefix, whose string reader passes
// plain runs 8 bytes at a time and copies them in bulk, with a reference
// that reads one byte at a time: the value, the length and ok must agree,
// on any bytes (invalid UTF-8 becoming U+FFFD as TextDecoder makes it).
func FuzzUnquotePrefix(f *testing.F) {
	for _, s := range []string{`"plain" rest`, `"a\nb\"c\u00fc\ud83d\udc5f"}`, `"\ud800"`, "\"naïve \xff 👟 \xed\xa0\x80 \xef\xbf\xbd ok\"", "\"0123456789abcdef\\t0123456789abcdef\x80\"", `"open`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		s, n, ok := UnquotePrefix(in)
		ws, wn, wok := unquoteReference(in)
		if s != ws || n != wn || ok != wok {
			t.Fatalf("%q: UnquotePrefix %q %d %v, reference %q %d %v", in, s, n, ok, ws, wn, wok)
		}
	})
}

// unquoteReference reads the JSON string at the start of in one byte at a
// time, as UnquotePrefix must.
func unquoteReference(in []byte) (string, int, bool) {
	if len(in) == 0 || in[0] != '"' {
		return "", 0, false
	}
	p := parser[[]byte]{in: in, pos: 1}
	var buf []byte
	for p.pos < len(in) {
		c := in[p.pos]
		switch {
		case c == '"':
			return string(buf), p.pos + 1, true
		case c < 0x20:
			return "", 0, false
		case c == '\\':
			var ok bool
			if buf, ok = p.escape(buf); !ok {
				return "", 0, false
			}
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.pos++
		default:
			r, size := decodeRune(in[p.pos:])
			buf = utf8.AppendRune(buf, r)
			p.pos += size
		}
	}
	return "", 0, false
}
