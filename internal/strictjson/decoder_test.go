package strictjson

import (
	"fmt"
	"strings"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseInteger(t *testing.T) {
	ok := map[string]int64{
		"0": 0, "-0": 0, "7": 7, "-7": -7, "7.0": 7, "70e-1": 7, "0.7E1": 7, "0.07e+2": 7, "1e2": 100,
		"9007199254740991": 1<<53 - 1, "9223372036854775807": 1<<63 - 1, "-9223372036854775808": -1 << 63,
		"922337203685477580.7e1": 1<<63 - 1, "1" + strings.Repeat("0", 300) + "e-300": 1, "0e999999999999": 0,
		"123456789012345678": 123456789012345678, "10.000": 10,
		// An exponent longer than a million digits' worth still cancels exactly.
		"1" + strings.Repeat("0", 1_000_000) + "e-1000000":  1,
		"0." + strings.Repeat("0", 1_000_000) + "1e1000001": 1,
	}
	for in, want := range ok {
		got, err := ParseInteger([]byte(in))
		require.NoError(t, err, short(in))
		assert.Equal(t, want, got, short(in))
	}
	bad := map[string]error{
		"7.5": ErrNotInteger, "1e-1": ErrNotInteger, "0.1": ErrNotInteger, "1e-999999999": ErrNotInteger,
		// A huge exponent is not cut down to one the mantissa's zeros cancel.
		"1" + strings.Repeat("0", 1_000_000) + "e-10000000":          ErrNotInteger,
		"1" + strings.Repeat("0", 1_000_000) + "e-99999999999999999": ErrNotInteger,
		"0." + strings.Repeat("0", 1_000_000) + "1e10000000":         ErrRange,
		"9223372036854775808": ErrRange, "-9223372036854775809": ErrRange, "1e19": ErrRange, "1e400": ErrRange, "1e999999999999": ErrRange,
		"": ErrWrongType, "-": ErrWrongType, "01": ErrWrongType, "1.": ErrWrongType, ".5": ErrWrongType, "1e": ErrWrongType, "1x": ErrWrongType, `"1"`: ErrWrongType, "+1": ErrWrongType,
	}
	for in, want := range bad {
		_, err := ParseInteger([]byte(in))
		assert.ErrorIs(t, err, want, short(in))
	}
}

// short names a long input in a failure message.
func short(in string) string {
	if len(in) <= 40 {
		return in
	}
	return fmt.Sprintf("%s…(%d bytes)…%s", in[:20], len(in), in[len(in)-20:])
}

func TestExceedsDepth(t *testing.T) {
	assert.False(t, exceedsDepth([]byte(`[[["]]]]]]"]]]`), 3))
	assert.True(t, exceedsDepth([]byte(`[[["]]]]]]"]]]`), 2))
	assert.False(t, exceedsDepth([]byte(`{"a\\":"{{{{","b":[{}]}`), 3))
	assert.True(t, exceedsDepth([]byte(`{"a\"{":"{{{{","b":[{}]}`), 2))
	assert.False(t, exceedsDepth([]byte(`"{{{{"`), 0))
}

func read(t *testing.T, in string, maxDepth int) *Decoder {
	t.Helper()
	d := Get([]byte(in), in, 0, 0, maxDepth)
	t.Cleanup(func() { Put(d) })
	return d
}

func TestDecoderReadsStrictly(t *testing.T) {
	in := `{"s":"plain","e":"a\u00e9\n","n":-12,"f":0.5,"b":true,"r":{"x":[1,2]},"t\u0079pe":"x"}`
	d := read(t, in, 8)
	require.NoError(t, d.Begin('{'))
	var names []string
	for d.More() {
		name, err := d.Name()
		require.NoError(t, err)
		names = append(names, string(name))
		switch string(name) {
		case "s":
			s, err := d.String()
			require.NoError(t, err)
			assert.Equal(t, "plain", s)
			assert.Equal(t, unsafeData(in[6:11]), unsafeData(s), "a string without escapes is a substring of src")
		case "e":
			s, err := d.String()
			require.NoError(t, err)
			assert.Equal(t, "aé\n", s)
		case "n":
			n, err := d.Integer()
			require.NoError(t, err)
			assert.Equal(t, int64(-12), n)
		case "f":
			f, err := d.Float()
			require.NoError(t, err)
			assert.Equal(t, 0.5, f)
		case "b":
			b, err := d.Bool()
			require.NoError(t, err)
			assert.True(t, b)
		case "r":
			r, err := d.Raw()
			require.NoError(t, err)
			assert.Equal(t, `{"x":[1,2]}`, string(r))
		default:
			require.NoError(t, d.Skip())
		}
	}
	require.NoError(t, d.End())
	require.NoError(t, d.Finish())
	assert.Equal(t, []string{"s", "e", "n", "f", "b", "r", "type"}, names)
}

func TestDecoderErrors(t *testing.T) {
	d := read(t, `{"a":1,"a":2}`, 8)
	require.NoError(t, d.Begin('{'))
	_, err := d.Name()
	require.NoError(t, err)
	require.NoError(t, d.Skip())
	_, err = d.Name()
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.True(t, se.IsDuplicateName())
	assert.Equal(t, "/a", se.Pointer)

	d = read(t, "\"\xff\"", 8)
	_, err = d.String()
	require.ErrorAs(t, err, &se)
	assert.False(t, se.IsDuplicateName())

	d = read(t, `[[1]]`, 1)
	require.NoError(t, d.Begin('['))
	assert.ErrorIs(t, d.Begin('['), ErrTooDeep)
	d = read(t, `[[1]]`, 1)
	require.NoError(t, d.Begin('['))
	_, err = d.Raw()
	assert.ErrorIs(t, err, ErrTooDeep)

	for _, in := range []string{`1`, `"x"`, `null`, `[]`} {
		d = read(t, in, 8)
		assert.ErrorIs(t, d.Begin('{'), ErrWrongType, in)
	}
	d = read(t, `1`, 8)
	_, err = d.String()
	assert.ErrorIs(t, err, ErrWrongType)
	d = read(t, `"1"`, 8)
	_, err = d.Integer()
	assert.ErrorIs(t, err, ErrWrongType)
	d = read(t, `1`, 8)
	_, err = d.Bool()
	assert.ErrorIs(t, err, ErrWrongType)
	d = read(t, `[]`, 8)
	_, err = d.RawObject()
	assert.ErrorIs(t, err, ErrWrongType)
	d = read(t, `{} x`, 8)
	require.NoError(t, d.Skip())
	require.ErrorAs(t, d.Finish(), &se)
	d = read(t, `{} {}`, 8)
	require.NoError(t, d.Skip())
	require.ErrorAs(t, d.Finish(), &se)
	d = read(t, `{"a":`, 8)
	require.NoError(t, d.Begin('{'))
	_, err = d.Name()
	require.NoError(t, err)
	_, err = d.Raw()
	require.ErrorAs(t, err, &se)
}

func TestPeekFirstMember(t *testing.T) {
	tests := map[string]string{
		`{"type":"delta","text":"x"}`:    "delta",
		" { \"type\" :\t\"tool_call\" }": "tool_call",
		`{"text":"x","type":"delta"}`:    "",
		`{"type":"d\u0065lta"}`:          "",
		`{"t\u0079pe":"delta"}`:          "",
		`{"type":5}`:                     "",
		`["type"]`:                       "",
		`{"type":"caf` + "\u00e9" + `"}`: "",
		`{"typeX":"delta"}`:              "",
		`{"type":"unterminated`:          "",
	}
	for in, want := range tests {
		d := read(t, in, 8)
		got, ok := d.PeekFirstMember("type")
		assert.Equal(t, want != "", ok, in)
		assert.Equal(t, want, string(got), in)
	}
	d := read(t, `{"event":{"type":"delta"}}`, 8)
	require.NoError(t, d.Begin('{'))
	_, err := d.Name()
	require.NoError(t, err)
	got, ok := d.PeekFirstMember("type")
	require.True(t, ok, "after a member name")
	assert.Equal(t, "delta", string(got))
	v, start, err := d.View()
	require.NoError(t, err)
	assert.Equal(t, `{"type":"delta"}`, string(v))
	assert.Equal(t, 9, start)

	assert.True(t, StartsWithMember([]byte(" {\n\"schemaVersion\":1}"), "schemaVersion"))
	assert.False(t, StartsWithMember([]byte(`{"schemaVersionX":1}`), "schemaVersion"))
	assert.False(t, StartsWithMember([]byte(`{"x":1,"schemaVersion":1}`), "schemaVersion"))
	assert.False(t, StartsWithMember([]byte(`{`), "schemaVersion"))
}

func TestAppend(t *testing.T) {
	b, err := AppendName([]byte("{"), "a")
	require.NoError(t, err)
	b, err = AppendString(b, "é\"<")
	require.NoError(t, err)
	b, err = AppendName(b, "b")
	require.NoError(t, err)
	b, err = AppendRaw(b, []byte("{ \"x\" : [1, \"\\u00e9\"] }"))
	require.NoError(t, err)
	b = append(b, ',')
	b = AppendBool(AppendInt(append(AppendFloat(b, 0.0041), ','), -3), true)
	assert.Equal(t, `{"a":"é\"<","b":{"x":[1,"\u00e9"]},0.0041,-3true`, string(b))
	_, err = AppendString(nil, "\xff")
	assert.Error(t, err)
	_, err = AppendRaw(nil, []byte(`{"a":1,"a":2}`))
	assert.Error(t, err)
}
