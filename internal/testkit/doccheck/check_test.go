package doccheck

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commentLines returns n comment lines, the first one starting with name.
func commentLines(name string, n int) string {
	var b strings.Builder
	b.WriteString("// " + name + " is documented.\n")
	for range n - 1 {
		b.WriteString("// More.\n")
	}
	return b.String()
}

// writeTree writes files (slash-separated paths relative to the returned
// root) to a new directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		path := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	}
	return root
}

// sample is a module with one case of every rule, a nested module, an
// exempt directory and a testdata directory, which is never read.
func sample() map[string]string {
	return map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n",
		"refusal/refusal.go": `// Package refusal has refusals.
package refusal

// Error is a refusal.
type Error struct{}

func (*Error) Error() string { return "" }

// ErrFoo is a sentinel.
var ErrFoo = &Error{}
`,
		// a: at the limits, and over them.
		"a/doc.go": commentLines("Package a", MaxPackageDocLines) + "package a\n",
		"a/a.go": `package a

` + commentLines("AtLimit", MaxDocLines) + `func AtLimit() {}

` + commentLines("OverLimit", MaxDocLines+1) + `func OverLimit() {}

// T is a type.
type T struct {
` + indent(commentLines("Field", MaxDocLines+1)) + `	Field int
}

// I is an interface.
type I interface {
` + indent(commentLines("Method", MaxDocLines+1)) + `	Method()
}

` + commentLines("unexported", MaxDocLines+5) + `func unexported() {}
`,
		"long/doc.go": commentLines("Package long", MaxPackageDocLines+1) + "package long\n",
		// b: links, good and broken, and names without links.
		"b/b.go": `// Package b links [a.AtLimit], [errors.Is], [T.M] and [*T]; its
// broken links are [a.Missing], [errors.Missing] and [Nowhere]. Plain
// names: a.AtLimit, ParseThing, T.M, ErrFoo and *Error. Not names:
// errors.AsType[*T], map[string]any, docs/contract.md, T alone.
package b

import (
	"errors"

	"example.com/m/a"
	"example.com/m/refusal"
)

var _ = errors.Is
var _ = a.AtLimit
var _ = refusal.ErrFoo

// T is a type.
type T struct{}

// M is a method. It names its own names M and T.M, and ParseThing.
func (T) M() {}

// ParseThing parses; ParseThing is its own name.
func ParseThing() {}
`,
		// skip breaks every rule and is exempt.
		"skip/doc.go": commentLines("Package skip", MaxPackageDocLines+1) + "// [Nowhere] and ParseSkip.\npackage skip\n\n// ParseSkip parses.\nfunc ParseSkip() {}\n",
		// nested is a module of its own that imports the outer one.
		"nested/go.mod": "module example.com/n\n\ngo 1.26\n",
		"nested/n.go": `// Package n links [a.AtLimit] and [a.Gone].
package n

import "example.com/m/a"

var _ = a.AtLimit
`,
		"testdata/x/x.go": commentLines("Package x", MaxPackageDocLines+1) + "package x\n",
	}
}

func indent(s string) string {
	return "\t" + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n\t") + "\n"
}

func exemptSkip(dir string) bool { return dir == "skip" }

// found is a Problem without its position, for comparison.
type found struct {
	Pkg, Name string
	Kind      Kind
	Detail    string
}

func problems(tree *Tree) []found {
	var out []found
	for _, p := range tree.Check(exemptSkip) {
		out = append(out, found{p.Pkg, p.Name, p.Kind, p.Detail})
	}
	slices.SortFunc(out, compareFound)
	return out
}

func compareFound(x, y found) int {
	return strings.Compare(x.Pkg+"\x00"+x.Name+"\x00"+string(x.Kind)+"\x00"+x.Detail,
		y.Pkg+"\x00"+y.Name+"\x00"+string(y.Kind)+"\x00"+y.Detail)
}

func TestCheckFindsEveryBreach(t *testing.T) {
	tree := load(t, writeTree(t, sample()))

	var paths []string
	for _, p := range tree.Packages {
		paths = append(paths, p.ImportPath)
	}
	assert.ElementsMatch(t, []string{"example.com/m/a", "example.com/m/b", "example.com/m/long",
		"example.com/m/refusal", "example.com/m/skip", "example.com/n"}, paths, "testdata is not read")

	want := []found{
		{"example.com/m/a", "I.Method", DocTooLong, "26 lines, limit 25"},
		{"example.com/m/a", "OverLimit", DocTooLong, "26 lines, limit 25"},
		{"example.com/m/a", "T.Field", DocTooLong, "26 lines, limit 25"},
		{"example.com/m/b", "", BrokenLink, "[Nowhere]: go doc cannot resolve it"},
		{"example.com/m/b", "", BrokenLink, "[errors.Missing]: no such symbol in errors"},
		{"example.com/m/b", "", BrokenLink, "[example.com/m/a.Missing]: no such symbol in example.com/m/a"},
		{"example.com/m/b", "", Unlinked, "*Error: a name of package refusal?"},
		{"example.com/m/b", "", Unlinked, "ErrFoo: a name of package refusal?"},
		{"example.com/m/b", "", Unlinked, "ParseThing"},
		{"example.com/m/b", "", Unlinked, "T.M"},
		{"example.com/m/b", "", Unlinked, "a.AtLimit"},
		{"example.com/m/b", "T.M", Unlinked, "ParseThing"},
		{"example.com/m/long", "", PackageDocTooLong, "91 lines, limit 90"},
		{"example.com/n", "", BrokenLink, "[example.com/m/a.Gone]: no such symbol in example.com/m/a"},
	}
	slices.SortFunc(want, compareFound)
	assert.Equal(t, want, problems(tree))
}

func TestDocsCountsLines(t *testing.T) {
	tree := load(t, writeTree(t, sample()))
	lines := map[string]int{}
	for _, d := range tree.Docs() {
		lines[d.Pkg+" "+d.Name] = d.Lines
	}
	assert.Equal(t, MaxPackageDocLines, lines["example.com/m/a "])
	assert.Equal(t, MaxPackageDocLines+1, lines["example.com/m/long "])
	assert.Equal(t, MaxDocLines, lines["example.com/m/a AtLimit"])
	assert.Equal(t, MaxDocLines+1, lines["example.com/m/a T.Field"])
	assert.NotContains(t, lines, "example.com/m/a unexported", "unexported identifiers are not counted")
}

// TestFixLinksWhatResolves checks that -fix turns every plain name that has
// a link into the link, and leaves the rest for a person.
func TestFixLinksWhatResolves(t *testing.T) {
	root := writeTree(t, sample())
	fixTree(t, load(t, root), exemptSkip)
	src, err := os.ReadFile(filepath.Join(root, "b", "b.go"))
	require.NoError(t, err)
	assert.Contains(t, string(src), "// names: [a.AtLimit], [ParseThing], [T.M], [refusal.ErrFoo] and [*refusal.Error]. Not names:\n")
	assert.Contains(t, string(src), "// errors.AsType[*T], map[string]any, docs/contract.md, T alone.")
	assert.Contains(t, string(src), "// M is a method. It names its own names M and T.M, and [ParseThing].")

	var left []found
	for _, p := range problems(load(t, root)) {
		if p.Kind == Unlinked {
			left = append(left, p)
		}
	}
	assert.Empty(t, left)
	skip, err := os.ReadFile(filepath.Join(root, "skip", "doc.go"))
	require.NoError(t, err)
	assert.Contains(t, string(skip), "// [Nowhere] and ParseSkip.", "an exempt package is left alone")
}
