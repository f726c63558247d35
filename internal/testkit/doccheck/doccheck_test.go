package doccheck

import (
	"flag"
	"go/ast"
	"go/doc/comment"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts -update
)

var fix = flag.Bool("fix", false, "rewrite the plain names that have a doc link into that link")

// exempt lists the directories (relative to the module root, with their
// subdirectories) whose docs are not checked: none.
var exempt []string

func isExempt(dir string) bool {
	for _, e := range exempt {
		if dir == e || strings.HasPrefix(dir, e+"/") {
			return true
		}
	}
	return false
}

func load(t *testing.T, dir string) *Tree {
	t.Helper()
	root, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := Load(root)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// TestModuleDocs checks the docs of every package of the module and of its
// nested modules (pgstore, otelchat, internal/bench).
func TestModuleDocs(t *testing.T) {
	tree := load(t, "../../..")
	if *fix {
		fixTree(t, tree, isExempt)
		tree = load(t, "../../..")
	}
	docs := tree.Docs()
	for _, d := range docs[:min(20, len(docs))] {
		t.Logf("%4d %s %s (%s)", d.Lines, d.Pkg, d.Name, d.Pos)
	}
	for _, p := range tree.Check(isExempt) {
		t.Error(p)
	}
}

// fixTree rewrites, in the source, every plain name that has a doc link,
// in the packages exempt does not exempt.
func fixTree(t *testing.T, tree *Tree, exempt func(dir string) bool) {
	edits := map[string][]edit{}
	for _, p := range tree.Packages {
		if exempt(p.Dir) {
			continue
		}
		tree.walk(p, func(name string, cg *ast.CommentGroup, self []string) {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, "/*") || strings.HasPrefix(c.Text, "//go:") || strings.HasPrefix(c.Text, "//line ") {
					return
				}
			}
			d := p.doc.Parser().Parse(cg.Text())
			changed := false
			eachText(d.Content, func(x comment.Text) []comment.Text {
				s, ok := x.(comment.Plain)
				if !ok {
					return nil
				}
				var out []comment.Text
				at := 0
				found := tree.plain(p, string(s), self)
				slices.SortFunc(found, func(a, b finding) int { return a.start - b.start })
				for _, f := range found {
					if f.fix == "" || f.start < at {
						continue
					}
					if f.start > at {
						out = append(out, s[at:f.start])
					}
					link := p.doc.Parser().Parse(f.fix).Content[0].(*comment.Paragraph).Text[0]
					out = append(out, link)
					at = f.end
					changed = true
				}
				if out == nil {
					return nil
				}
				if at < len(s) {
					out = append(out, s[at:])
				}
				return out
			})
			if !changed {
				return
			}
			start := tree.Fset.Position(cg.Pos())
			end := tree.Fset.Position(cg.End())
			edits[start.Filename] = append(edits[start.Filename], edit{start.Offset, end.Offset, start.Column, render(d)})
		})
	}
	for file, list := range edits {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(list, func(a, b edit) int { return b.start - a.start })
		for _, e := range list {
			lineStart := strings.LastIndexByte(string(src[:e.start]), '\n') + 1
			indent := string(src[lineStart:e.start])
			if strings.TrimSpace(indent) != "" {
				indent = strings.Repeat(" ", len(indent)) // a trailing comment
			}
			text := strings.ReplaceAll(e.text, "\n", "\n"+indent)
			src = append(src[:e.start:e.start], append([]byte(text), src[e.end:]...)...)
		}
		if err := os.WriteFile(file, src, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %d docs in %s", len(list), file)
	}
}

type edit struct {
	start, end, column int
	text               string
}

// render prints a doc as gofmt writes a // comment, without the last
// line's newline.
func render(d *comment.Doc) string {
	var b strings.Builder
	text := string((&comment.Printer{}).Comment(d))
	for line := range strings.SplitSeq(strings.TrimSuffix(text, "\n"), "\n") {
		switch {
		case line == "":
			b.WriteString("//\n")
		case strings.HasPrefix(line, "\t"):
			b.WriteString("//" + line + "\n")
		default:
			b.WriteString("// " + line + "\n")
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}
