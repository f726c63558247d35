package strictjson

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ask has the members of a blocks.AskBlock: question, options and refs.
type ask struct {
	Question string   `json:"question"`
	Options  []option `json:"options,omitempty"`
	Refs     []string `json:"refs"`
}

type option struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

func TestFoldCollisionFindsTheLeastVariant(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"b":{"x":[{"ID":1,"id":2}]}}`:        "/b/x/0/ID",
		`{"k":1,"\u212a":2}`:                         "/k",
		`{"a":[1,2,{"b":{}}]}`:                       "",
		`{"a":1,"b":2,"B":3,"K":4,"k":5}`:            "/B",
		`{"s":1,"ſ":2,"S":3}`:                        "/S",
		`{"x":{"K":1,"\u212a":2},"y":{"a":1,"A":2}}`: "/x/K",
		`{"a/b":{"c":1},"A/B":2}`:                    "/A~1B",
	} {
		p, found, err := FoldCollision([]byte(in), nil, 100)
		require.NoError(t, err, in)
		assert.Equal(t, want, p, in)
		assert.Equal(t, want != "", found, in)
	}
}

func TestFoldCollisionComparesWithTheStructsMembers(t *testing.T) {
	typ := reflect.TypeFor[ask]()
	for in, want := range map[string]string{
		`{"question":"q","Refs":["r"]}`:                                "/Refs",
		`{"question":"q","options":[{"id":"a","Label":"A"}]}`:          "/options/0/Label",
		`{"question":"q","extra":{"Question":1}}`:                      "",
		`{"question":"q","extra":{"x":1,"X":2}}`:                       "/extra/X",
		`{"question":"q","options":[{"id":"a","label":"A","ID":"b"}]}`: "/options/0/ID",
	} {
		p, found, err := FoldCollision([]byte(in), typ, 100)
		require.NoError(t, err, in)
		assert.Equal(t, want, p, in)
		assert.Equal(t, want != "", found, in)
	}
	for _, in := range []string{`{"a":1,"a":2}`, `{"a":"` + "\xff" + `"}`, `{"a":1} {}`, `[[[1]]]`} {
		_, _, err := FoldCollision([]byte(in), typ, 2)
		assert.Error(t, err, in)
	}
}

func TestEscapePointer(t *testing.T) {
	assert.Equal(t, "a~0b~1c", EscapePointer("a~b/c"))
	assert.Equal(t, "plain", EscapePointer("plain"))
}

// FuzzFoldCollision compares FoldCollision, which groups names by
// FoldKey, with the pairwise strings.EqualFold comparison it replaces, on
// one object whose names are the NUL-separated parts of joined, decoded
// into a map or into an ask (whose members are question, options and
// refs).
func FuzzFoldCollision(f *testing.F) {
	for _, names := range [][]string{{"a", "A"}, {"k", "\u212a"}, {"s", "\u017f", "S"}, {"type", "typ\u0065", "TYPE"}, {"\u03a3", "\u03c2", "\u03c3"}, {"ǅ", "ǆ", "Ǆ"}, {"x", "y"}, {"question", "Refs"}, {"QUESTION"}, {"ref\u017f", "options"}} {
		f.Add(strings.Join(names, "\x00"), false)
		f.Add(strings.Join(names, "\x00"), true)
	}
	f.Fuzz(func(t *testing.T, joined string, typed bool) {
		if !utf8.ValidString(joined) {
			return
		}
		obj := map[string]any{}
		for _, n := range strings.Split(joined, "\x00") {
			obj[n] = 1
		}
		raw, err := json.Marshal(obj)
		require.NoError(t, err)
		var known []string
		typ := reflect.TypeFor[map[string]any]()
		if typed {
			known, typ = []string{"question", "options", "refs"}, reflect.TypeFor[ask]()
		}
		names := slices.Sorted(maps.Keys(obj))
		want := ""
		for _, n := range names {
			variant := func(m string) bool { return m != n && strings.EqualFold(m, n) }
			if slices.ContainsFunc(names, variant) || (!slices.Contains(known, n) && slices.ContainsFunc(known, variant)) {
				want = "/" + EscapePointer(n)
				break
			}
		}
		got, found, err := FoldCollision(raw, typ, 100)
		require.NoError(t, err)
		if got != want || found != (want != "") {
			t.Fatalf("FoldCollision(%q, %v) = %q, %v; want %q", names, typ, got, found, want)
		}
	})
}
