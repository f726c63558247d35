package chatprotocol

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/blocks"
)

func TestFoldCollision(t *testing.T) {
	tests := map[string]string{
		`{"a":1,"b":{"x":[{"ID":1,"id":2}]}}`: "/b/x/0/ID",
		`{"prompt":"p","Prompt":"q"}`:         "/Prompt",
		`{"k":1,"\u212a":2}`:                  "/k",
		`{"a":[1,2,{"b":{}}]}`:                "",
		// The least name that has a variant, not the first variant met.
		`{"a":1,"b":2,"B":3,"K":4,"k":5}`:       "/B",
		`{"s":1,"ſ":2,"S":3}`:                   "/S",
		`{"x":{"K":1,"K":2},"y":{"a":1,"A":2}}`: "/x/K",
	}
	for in, want := range tests {
		err := decodeKept([]byte(in), new(map[string]any), CodeInvalidEvent, "")
		if want == "" {
			assert.NoError(t, err, in)
			continue
		}
		require.ErrorIs(t, err, ErrInvalidEnvelope, in)
		assert.Equal(t, want, err.(*Error).Path, in)
	}
}

func TestDecodeKeptRefusesWrongTypesAtTheirPath(t *testing.T) {
	var r blocks.ReportBlock
	err := decodeKept([]byte(`{"plans":[{"title":5}]}`), &r, CodeInvalidEvent, "/event/blocks/0/report")
	require.ErrorIs(t, err, ErrInvalidEvent)
	assert.Equal(t, "/event/blocks/0/report/plans/0/title", err.(*Error).Path)
	err = decodeKept([]byte(`{"plans":[],"plans":[]}`), &r, CodeInvalidEvent, "/r")
	require.ErrorIs(t, err, ErrInvalidEnvelope)
}

func TestAppendKept(t *testing.T) {
	kept := []byte(`{ "question":"Go?", "later":{"x":1} }`)
	var a blocks.AskBlock
	require.NoError(t, decodeKept(kept, &a, CodeInvalidEvent, ""))
	out, err := appendKept([]byte("["), &a, kept)
	require.NoError(t, err)
	assert.Equal(t, `[{"question":"Go?","later":{"x":1}}`, string(out), "unchanged: the kept JSON, compacted")
	a.Question = "Stop?"
	out, err = appendKept(nil, &a, kept)
	require.NoError(t, err)
	assert.Equal(t, `{"question":"Stop?"}`, string(out), "changed: from the fields")
	out, err = appendKept(nil, &a, nil)
	require.NoError(t, err)
	assert.Equal(t, `{"question":"Stop?"}`, string(out))
}

// FuzzFoldCollision compares foldCollision, which groups names by foldKey,
// with the pairwise strings.EqualFold comparison it replaces.
func FuzzFoldCollision(f *testing.F) {
	for _, names := range [][]string{{"a", "A"}, {"k", "\u212a"}, {"s", "\u017f", "S"}, {"type", "typ\u0065", "TYPE"}, {"\u03a3", "\u03c2", "\u03c3"}, {"ǅ", "ǆ", "Ǆ"}, {"x", "y"}} {
		f.Add(strings.Join(names, "\x00"))
	}
	f.Fuzz(func(t *testing.T, joined string) {
		if !utf8.ValidString(joined) {
			return
		}
		obj := map[string]any{}
		for _, n := range strings.Split(joined, "\x00") {
			obj[n] = 1
		}
		names := slices.Sorted(maps.Keys(obj))
		want := ""
		for i, a := range names {
			for _, b := range names[i+1:] {
				if strings.EqualFold(a, b) && want == "" {
					want = "/" + escapePointer(a)
				}
			}
		}
		got, found := foldCollision(obj, "")
		if got != want || found != (want != "") {
			t.Fatalf("foldCollision(%q) = %q, %v; want %q", names, got, found, want)
		}
	})
}
