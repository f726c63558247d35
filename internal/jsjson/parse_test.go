package jsjson

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"maps"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// canon writes v as gen-golden.js's canon does: sorted members, ±Infinity
// as bare words, -0 as -0.
func canon(v any) string {
	switch v := v.(type) {
	case float64:
		switch {
		case math.IsInf(v, 1):
			return "Infinity"
		case math.IsInf(v, -1):
			return "-Infinity"
		case v == 0 && math.Signbit(v):
			return "-0"
		}
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = canon(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		var b []byte
		b = append(b, '{')
		first := true
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = AppendString(b, k, false)
			b = append(b, ':')
			b = append(b, canon(v[k])...)
		}
		return string(append(b, '}'))
	}
	return string(AppendValue(nil, v))
}

type goldenCase struct {
	Hex   string  `json:"hex"`
	OK    bool    `json:"ok"`
	Canon *string `json:"canon"`
}

func readGolden(t testing.TB) []goldenCase {
	f, err := os.Open("testdata/jsparse-golden.jsonl")
	require.NoError(t, err)
	defer f.Close()
	var cases []goldenCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c goldenCase
		require.NoError(t, json.Unmarshal(sc.Bytes(), &c))
		cases = append(cases, c)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, cases)
	return cases
}

// TestParseGolden checks Parse against what Node's TextDecoder and
// JSON.parse made of the same bytes (testdata/gen-golden.js).
func TestParseGolden(t *testing.T) {
	for _, c := range readGolden(t) {
		in, err := hex.DecodeString(c.Hex)
		require.NoError(t, err)
		name := c.Hex
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			v, ok := Parse(in)
			require.Equal(t, c.OK, ok, "input %q", in)
			vs, oks := ParseString(string(in))
			assert.Equal(t, ok, oks)
			assert.Equal(t, v, vs)
			assert.Equal(t, ok, Valid(in))
			if ok {
				require.NotNil(t, c.Canon)
				assert.Equal(t, *c.Canon, canon(v))
			}
		})
	}
}

func TestParseDeepNesting(t *testing.T) {
	const depth = 1_000_000
	in := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	v, ok := ParseString(in)
	require.True(t, ok)
	for range depth - 1 {
		arr, isArr := v.([]any)
		require.True(t, isArr)
		require.Len(t, arr, 1)
		v = arr[0]
	}
	assert.Equal(t, []any{}, v)
	_, ok = ParseString(in[:len(in)-1])
	assert.False(t, ok)
}

func TestFrameStack(t *testing.T) {
	var s frameStack
	const n = 3*maxChunk + 3 // the first slice and chunks beyond
	for round := range 2 {   // the second round reuses the chunks
		for i := range n {
			s.push(frame{valStart: i})
			require.Equal(t, i, s.top().valStart)
		}
		for i := n - 1; i >= 0; i-- {
			require.Equal(t, i+1, s.depth, "round %d", round)
			assert.Equal(t, i, s.top().valStart)
			s.pop()
		}
		assert.Zero(t, s.depth)
	}
	assert.Equal(t, 3, len(s.rest), "the chunks of the first round are kept and reused")
}

func TestParseValues(t *testing.T) {
	cases := []struct {
		in   string
		want any
	}{
		{`{"a":1,"a":"two"}`, map[string]any{"a": "two"}},
		{`{"a":{"x":1},"a":{"y":2}}`, map[string]any{"a": map[string]any{"y": 2.0}}},
		{`{"Type":"a","type":"b","TYPE":"c"}`, map[string]any{"Type": "a", "type": "b", "TYPE": "c"}},
		{`[1e400,-1e400,1e-400]`, []any{math.Inf(1), math.Inf(-1), 0.0}},
		{`"\ud800"`, "\xed\xa0\x80"},
		{`"\udbff\udfff"`, "\U0010FFFF"},
		{"\"\xe2\x82A\"", "\uFFFDA"},
		{"\"\xed\xa0\x80\"", "\uFFFD\uFFFD\uFFFD"},
		{`{}`, map[string]any{}},
		{`[]`, []any{}},
		{` null `, nil},
	}
	for _, c := range cases {
		v, ok := ParseString(c.in)
		require.True(t, ok, c.in)
		assert.Equal(t, c.want, v, c.in)
	}
}

func TestParseObjectSpans(t *testing.T) {
	in := []byte(`{"type":"state", "snapshot" : {"b":[1, 2]} ,"snapshot":{"a" : 1},"v":3}`)
	obj, spans, ok := ParseObject(in)
	require.True(t, ok)
	assert.Equal(t, map[string]any{"a": 1.0}, obj["snapshot"])
	assert.Equal(t, `{"a" : 1}`, string(spans.Get("snapshot")))
	assert.Equal(t, `"state"`, string(spans.Get("type")))
	assert.Equal(t, `3`, string(spans.Get("v")))
	assert.Nil(t, spans.Get("missing"))
	assert.Len(t, spans, 4)
	assert.Equal(t, `{"b":[1, 2]}`, string(spans[1].Value))

	for _, in := range []string{`[]`, `"x"`, `{`, `{"a":1}x`} {
		_, _, ok := ParseObject([]byte(in))
		assert.False(t, ok, in)
	}
}

func TestParsePrefix(t *testing.T) {
	cases := []struct {
		in   string
		want any
		n    int
		ok   bool
	}{
		{`{"a":"</ask>"}</ask>`, map[string]any{"a": "</ask>"}, 14, true},
		{`123 456`, 123.0, 3, true},
		{`12</ask>`, 12.0, 2, true},
		{`nullx`, nil, 4, true},
		{` 1`, nil, 0, false},
		{`{"a":`, nil, 0, false},
		{``, nil, 0, false},
	}
	for _, c := range cases {
		v, n, ok := ParsePrefix(c.in)
		assert.Equal(t, c.ok, ok, c.in)
		assert.Equal(t, c.want, v, c.in)
		assert.Equal(t, c.n, n, c.in)
	}
}

func TestUnquotePrefix(t *testing.T) {
	cases := []struct {
		in   string
		want string
		n    int
		ok   bool
	}{
		{`"plain" rest`, "plain", 7, true},
		{`"a\nb\"c\u00fc\ud83d\udc5f"}`, "a\nb\"cü👟", 27, true},
		{`"\ud800"`, "\xed\xa0\x80", 8, true}, // a lone surrogate in its WTF-8 form, as Parse keeps it
		{`""`, "", 2, true},
		{`"\x"`, "", 0, false},
		{"\"tab\there\"", "", 0, false},
		{`"open`, "", 0, false},
		{` "a"`, "", 0, false},
		{`1`, "", 0, false},
		{``, "", 0, false},
	}
	for _, c := range cases {
		s, n, ok := UnquotePrefix([]byte(c.in))
		assert.Equal(t, c.ok, ok, c.in)
		assert.Equal(t, c.want, s, c.in)
		assert.Equal(t, c.n, n, c.in)
		if ok {
			v, ok := ParseString(c.in[:n])
			assert.True(t, ok)
			assert.Equal(t, v, s, "the same string as Parse reads")
		}
	}
}

// TestParseMatchesEncodingJSON compares Parse with encoding/json on inputs
// where the two must agree (valid UTF-8, no lone surrogate escape, numbers
// in range, depth under encoding/json's limit).
func TestParseMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"a":[1,2,{"b":null}],"c":"d\u00e9\n","e":true,"f":-0.5e-3}`,
		`[{"x":{"y":{"z":[]}}}, "\ud83d\ude00", 12345678901234567890]`,
		`{"a":1,"a":2}`,
	} {
		var want any
		require.NoError(t, json.Unmarshal([]byte(in), &want))
		got, ok := ParseString(in)
		require.True(t, ok)
		assert.Equal(t, want, got, in)
	}
}
