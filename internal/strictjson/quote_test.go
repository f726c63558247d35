package strictjson

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/assert"
)

// quoteCases are strings with every kind of byte AppendString treats
// apart, at every offset around its 8-byte steps.
var quoteCases = []string{
	"", "a", "plain ASCII text of some length", `"`, `\`, "\x00", "\x1f", " ", "\x7f",
	"a\nline\tbreak\r\n\b\f", `say "hi" \o/`, "naïve 👟 ümlaut", "\u2028\u2029", "<b>&amp;</b>",
	"\xff", "abc\xe2\x82", "\xed\xa0\x80", "ok\x80ok", "\ufffd", "01234567\"89abcdef",
	"0123456\x01", "01234567", "0123456789abcde\\",
}

func TestAppendStringIsAppendQuote(t *testing.T) {
	for _, s := range quoteCases {
		for pad := range 9 {
			in := strings.Repeat("x", pad) + s
			want, wantErr := jsontext.AppendQuote([]byte("pre"), in)
			got, err := AppendString([]byte("pre"), in)
			assert.Equal(t, string(want), string(got), "%q", in)
			assert.Equal(t, wantErr, err, "%q", in)
			assert.Equal(t, wantErr, CheckString(in), "%q", in)
			checkBody(t, in)
		}
	}
}

// checkBody checks that AppendStringBody writes what AppendString writes
// between its quotes, for s whole and for s cut in two at every rune
// boundary, and refuses what it refuses with dst unchanged.
func checkBody(t testing.TB, s string) {
	t.Helper()
	quoted, wantErr := AppendString(nil, s)
	body, err := AppendStringBody([]byte("pre"), s)
	if wantErr != nil {
		if !reflect.DeepEqual(wantErr, err) || string(body) != "pre" {
			t.Fatalf("%q: AppendStringBody %q %v, want pre and %v", s, body, err, wantErr)
		}
		return
	}
	want := "pre" + string(quoted[1:len(quoted)-1])
	if err != nil || string(body) != want {
		t.Fatalf("%q: AppendStringBody %q %v, want %q", s, body, err, want)
	}
	for i := range s {
		pieces, err := AppendStringBody([]byte("pre"), s[:i])
		if err == nil {
			pieces, err = AppendStringBody(pieces, s[i:])
		}
		if err != nil || string(pieces) != want {
			t.Fatalf("%q cut at %d: %q %v, want %q", s, i, pieces, err, want)
		}
	}
}

// FuzzAppendString compares AppendString with jsontext.AppendQuote, whose
// output it must reproduce byte for byte, error included.
func FuzzAppendString(f *testing.F) {
	for _, s := range quoteCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, wantErr := jsontext.AppendQuote(nil, s)
		got, err := AppendString(nil, s)
		if !bytes.Equal(want, got) || !reflect.DeepEqual(wantErr, err) {
			t.Fatalf("%q: AppendQuote %q %v, AppendString %q %v", s, want, wantErr, got, err)
		}
		if cerr := CheckString(s); !reflect.DeepEqual(cerr, wantErr) {
			t.Fatalf("%q: CheckString %v, AppendQuote %v", s, cerr, wantErr)
		}
		checkBody(t, s)
	})
}

// FuzzCheckRaw checks that CheckRaw accepts exactly what AppendRaw
// accepts.
func FuzzCheckRaw(f *testing.F) {
	for _, s := range []string{`1`, ` {"a" : [1, "x"]} `, `{"a":1,"a":2}`, `[1,`, `"\ud800"`, "\"\xff\"", `{} {}`, ``, `nul`, `-0.0e+1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		_, aerr := AppendRaw(nil, raw)
		cerr := CheckRaw(raw)
		if (aerr == nil) != (cerr == nil) {
			t.Fatalf("%q: AppendRaw %v, CheckRaw %v", raw, aerr, cerr)
		}
	})
}

func BenchmarkAppendString(b *testing.B) {
	texts := []string{
		// Tokens as a stream carries them (internal/testkit/teststream's words).
		"trail two 50% days stock", "size \"quoted\"", "naïve 43 stock line\nbreak for for and", "ümlaut 👟 runner tab\there",
		"Refunds are accepted within 30 days of delivery.",
		"size \"quoted\" and a line\nbreak ships within two days",
		"naïve 👟 ümlaut trail runner",
		strings.Repeat("A long paragraph of plain text, as a model writes it. ", 20),
	}
	total := 0
	for _, s := range texts {
		total += len(s)
	}
	for _, c := range []struct {
		name   string
		append func([]byte, string) ([]byte, error)
	}{
		{"strictjson", AppendString},
		{"baseline_jsontext", func(dst []byte, s string) ([]byte, error) { return jsontext.AppendQuote(dst, s) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(total))
			var buf []byte
			for b.Loop() {
				for _, s := range texts {
					var err error
					if buf, err = c.append(buf[:0], s); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
