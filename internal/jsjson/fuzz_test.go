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
