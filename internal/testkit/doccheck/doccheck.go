// Package doccheck reads the doc comments of every package in a tree of Go
// modules, as go doc shows them, and reports what breaks the module's rules
// for them: a package doc over [MaxPackageDocLines] lines, an exported
// identifier's doc over [MaxDocLines], a doc link that leads nowhere, and
// another identifier named in plain text rather than by a doc link. The
// package is for tests only.
package doccheck

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/doc/comment"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The limits, in source lines of a comment group, blank comment lines
// included.
const (
	MaxPackageDocLines = 90
	MaxDocLines        = 25
)

// Kind names the rule a [Problem] breaks.
type Kind string

// The kinds of [Problem].
const (
	// PackageDocTooLong is a package doc over [MaxPackageDocLines] lines,
	// counted over every file of the package.
	PackageDocTooLong Kind = "package doc too long"
	// DocTooLong is the doc of an exported identifier (a const, var, type,
	// func, method, struct field or interface method) over [MaxDocLines]
	// lines.
	DocTooLong Kind = "doc too long"
	// BrokenLink is a doc link to a symbol its package does not have, or
	// bracketed text that go doc cannot resolve and shows as plain text.
	BrokenLink Kind = "broken link"
	// Unlinked is another identifier named in plain text where a doc link
	// would resolve: pkg.Name, an exported symbol of the own package whose
	// name has two capitals or more, or a refusal sentinel or code.
	Unlinked Kind = "unlinked name"
)

// Problem is one breach of the rules, at the position of its comment.
type Problem struct {
	Pos  token.Position
	Pkg  string // the package's import path
	Name string // the documented identifier, "" for the package doc
	Kind Kind
	// Detail is the line count for a length, the bracketed or plain text
	// for a link.
	Detail string
}

func (p Problem) String() string {
	name := p.Name
	if name == "" {
		name = "package doc"
	}
	return fmt.Sprintf("%s: %s %s: %s: %s", p.Pos, p.Pkg, name, p.Kind, p.Detail)
}

// Doc is one doc comment and its length in lines.
type Doc struct {
	Pos   token.Position
	Pkg   string
	Name  string // "" for the package doc
	Lines int
}

// Package is one package of the tree: its non-test files that match the
// default build context, parsed with their comments.
type Package struct {
	Dir        string // relative to the tree's root, "." for the root
	ImportPath string
	Name       string
	Files      []*ast.File
	doc        *doc.Package
}

// Tree is every package under a root directory, nested modules included.
type Tree struct {
	Root     string
	Fset     *token.FileSet
	Packages []*Package
	byPath   map[string]*Package
	std      map[string]*doc.Package // loaded on demand, nil when absent
}

// Load parses every package under root, skipping testdata, vendor and
// directories whose names start with "." or "_", as the go command does.
// Each package's import path comes from the nearest go.mod at or above its
// directory within root.
func Load(root string) (*Tree, error) {
	t := &Tree{Root: root, Fset: token.NewFileSet(), byPath: map[string]*Package{}, std: map[string]*doc.Package{}}
	modules := map[string]string{} // directory → module path
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if p != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if mod, err := modulePath(filepath.Join(p, "go.mod")); err != nil {
			return err
		} else if mod != "" {
			modules[p] = mod
		}
		pkg, err := t.loadDir(root, p, modules)
		if err != nil || pkg == nil {
			return err
		}
		t.Packages = append(t.Packages, pkg)
		t.byPath[pkg.ImportPath] = pkg
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

func modulePath(goMod string) (string, error) {
	f, err := os.Open(goMod)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no module line", goMod)
}

func (t *Tree) loadDir(root, dir string, modules map[string]string) (*Package, error) {
	files, names, err := parseDir(t.Fset, dir)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return nil, err
	}
	importPath := ""
	for d := dir; ; d = filepath.Dir(d) {
		if mod, ok := modules[d]; ok {
			r, err := filepath.Rel(d, dir)
			if err != nil {
				return nil, err
			}
			importPath = path.Join(mod, filepath.ToSlash(r))
			break
		}
		if d == root || d == filepath.Dir(d) {
			return nil, fmt.Errorf("%s: no go.mod at or above it within %s", dir, root)
		}
	}
	dp, err := doc.NewFromFiles(t.Fset, files, importPath, doc.PreserveAST)
	if err != nil {
		return nil, err
	}
	_ = names
	return &Package{Dir: filepath.ToSlash(rel), ImportPath: importPath, Name: dp.Name, Files: files, doc: dp}, nil
}

// parseDir parses the non-test .go files of dir that match the default
// build context, all of one package (the most common name wins, as a
// directory holds one package).
func parseDir(fset *token.FileSet, dir string) ([]*ast.File, []string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var files []*ast.File
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		if ok, err := build.Default.MatchFile(dir, n); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, f)
		names = append(names, n)
	}
	return files, names, nil
}

// Docs returns every package doc, its lines summed over the package's
// files, and every exported identifier's doc of the tree, longest first.
func (t *Tree) Docs() []Doc {
	var out []Doc
	for _, p := range t.Packages {
		pkgDoc := Doc{Pkg: p.ImportPath}
		t.walk(p, func(name string, cg *ast.CommentGroup, _ []string) {
			if name == "" {
				if pkgDoc.Lines == 0 {
					pkgDoc.Pos = t.Fset.Position(cg.Pos())
				}
				pkgDoc.Lines += lines(cg)
				return
			}
			out = append(out, Doc{Pos: t.Fset.Position(cg.Pos()), Pkg: p.ImportPath, Name: name, Lines: lines(cg)})
		})
		if pkgDoc.Lines > 0 {
			out = append(out, pkgDoc)
		}
	}
	slices.SortStableFunc(out, func(a, b Doc) int { return b.Lines - a.Lines })
	return out
}

// lines counts the source lines of a comment group.
func lines(cg *ast.CommentGroup) int {
	n := 0
	for _, c := range cg.List {
		n += strings.Count(c.Text, "\n") + 1
	}
	return n
}

// walk calls fn for each package doc comment (name "") and for the doc
// of every exported identifier, with the names the doc documents.
func (t *Tree) walk(p *Package, fn func(name string, cg *ast.CommentGroup, self []string)) {
	for _, f := range p.Files {
		if f.Doc != nil {
			fn("", f.Doc, nil)
		}
	}
	for _, f := range p.Files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || d.Doc == nil {
					continue
				}
				name, self := d.Name.Name, []string{d.Name.Name}
				if d.Recv != nil && len(d.Recv.List) == 1 {
					name = recvName(d.Recv.List[0].Type) + "." + name
					self = append(self, name)
				}
				fn(name, d.Doc, self)
			case *ast.GenDecl:
				t.walkGen(d, fn)
			}
		}
	}
}

func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return "?"
		}
	}
}

func (t *Tree) walkGen(d *ast.GenDecl, fn func(string, *ast.CommentGroup, []string)) {
	var exported []string
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.TypeSpec:
			if s.Name.IsExported() {
				exported = append(exported, s.Name.Name)
			}
		case *ast.ValueSpec:
			for _, n := range s.Names {
				if n.IsExported() {
					exported = append(exported, n.Name)
				}
			}
		}
	}
	if len(exported) == 0 {
		return
	}
	if d.Doc != nil {
		name := exported[0]
		if d.Lparen.IsValid() {
			name = "(" + strings.Join(exported, ", ") + ")"
		}
		fn(name, d.Doc, exported)
	}
	for _, s := range d.Specs {
		switch s := s.(type) {
		case *ast.TypeSpec:
			if !s.Name.IsExported() {
				continue
			}
			if s.Doc != nil && s.Doc != d.Doc {
				fn(s.Name.Name, s.Doc, []string{s.Name.Name})
			}
			walkFields(s.Name.Name, s.Type, fn)
		case *ast.ValueSpec:
			var names []string
			for _, n := range s.Names {
				if n.IsExported() {
					names = append(names, n.Name)
				}
			}
			if len(names) == 0 {
				continue
			}
			for _, cg := range []*ast.CommentGroup{s.Doc, s.Comment} {
				if cg != nil && cg != d.Doc {
					fn(strings.Join(names, ", "), cg, names)
				}
			}
		}
	}
}

// walkFields reports the docs and line comments of a struct's exported
// fields and an interface's exported methods.
func walkFields(typeName string, e ast.Expr, fn func(string, *ast.CommentGroup, []string)) {
	var list *ast.FieldList
	switch x := e.(type) {
	case *ast.StructType:
		list = x.Fields
	case *ast.InterfaceType:
		list = x.Methods
	default:
		return
	}
	for _, f := range list.List {
		var names []string
		for _, n := range f.Names {
			if n.IsExported() {
				names = append(names, n.Name)
			}
		}
		if len(f.Names) == 0 { // embedded
			if n := recvName(f.Type); n != "?" && ast.IsExported(n) {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			continue
		}
		for _, cg := range []*ast.CommentGroup{f.Doc, f.Comment} {
			if cg != nil {
				fn(typeName+"."+strings.Join(names, ", "), cg, names)
			}
		}
	}
}

// Check returns every [Problem] of the tree's packages whose directory
// (relative to the root, slash-separated) is not exempt; a directory is
// exempt when exempt reports true for it.
func (t *Tree) Check(exempt func(dir string) bool) []Problem {
	var out []Problem
	for _, d := range t.Docs() {
		limit, kind := MaxDocLines, DocTooLong
		if d.Name == "" {
			limit, kind = MaxPackageDocLines, PackageDocTooLong
		}
		if d.Lines > limit && !exempt(t.byPath[d.Pkg].Dir) {
			out = append(out, Problem{Pos: d.Pos, Pkg: d.Pkg, Name: d.Name, Kind: kind,
				Detail: fmt.Sprintf("%d lines, limit %d", d.Lines, limit)})
		}
	}
	for _, p := range t.Packages {
		if exempt(p.Dir) {
			continue
		}
		t.walk(p, func(name string, cg *ast.CommentGroup, self []string) {
			pos := t.Fset.Position(cg.Pos())
			t.links(p, p.doc.Parser().Parse(cg.Text()), self, func(f finding) {
				out = append(out, Problem{Pos: pos, Pkg: p.ImportPath, Name: name, Kind: f.kind, Detail: f.detail})
			})
		})
	}
	return out
}

// finding is one link problem in a doc. In plain text, [start, end) is
// the offending text within its Plain node and fix, when not "", the doc
// link that replaces it.
type finding struct {
	kind       Kind
	detail     string
	start, end int
	fix        string
}

var (
	// bracketed is the text of a doc link, as go/doc/comment reads it.
	bracketed = regexp.MustCompile(`\[(\*?(?:[\w./-]+\.)?[A-Z]\w*)\]`)
	// qualified is pkg.Name or pkg.Name.Method in plain text.
	qualified = regexp.MustCompile(`\*?\b([a-z]\w*)\.([A-Z]\w*)(?:\.([A-Z]\w*))?\b`)
	// word is an identifier, or Type.Method, in plain text.
	word = regexp.MustCompile(`\*?\b([A-Z]\w*)(?:\.([A-Z]\w*))?\b`)
)

// links reports the link problems of a parsed doc: doc links into other
// packages that name no symbol, and, in its plain text (headings and code
// blocks aside), what [Tree.plain] finds.
func (t *Tree) links(p *Package, d *comment.Doc, self []string, report func(finding)) {
	eachText(d.Content, func(x comment.Text) []comment.Text {
		switch x := x.(type) {
		case comment.Plain:
			for _, f := range t.plain(p, string(x), self) {
				report(f)
			}
		case comment.Italic:
			for _, f := range t.plain(p, string(x), self) {
				report(f)
			}
		case *comment.DocLink:
			if x.ImportPath != "" && !t.resolves(x) {
				report(finding{kind: BrokenLink, detail: "[" + linkText(x) + "]: no such symbol in " + x.ImportPath})
			}
		}
		return nil
	})
}

// eachText calls fn for each text of the paragraphs and list items of
// blocks; a non-nil result replaces the text.
func eachText(blocks []comment.Block, fn func(comment.Text) []comment.Text) {
	edit := func(list []comment.Text) []comment.Text {
		var out []comment.Text
		for _, x := range list {
			if r := fn(x); r != nil {
				out = append(out, r...)
			} else {
				out = append(out, x)
			}
		}
		return out
	}
	for _, b := range blocks {
		switch b := b.(type) {
		case *comment.Paragraph:
			b.Text = edit(b.Text)
		case *comment.List:
			for _, item := range b.Items {
				eachText(item.Content, fn)
			}
		}
	}
}

func linkText(l *comment.DocLink) string {
	s := l.ImportPath
	if l.Recv != "" {
		s += "." + l.Recv
	}
	return s + "." + l.Name
}

// resolves reports whether a doc link into another package names a symbol
// of it. Links into packages outside the tree and the standard library
// (the nested modules' dependencies) resolve by assumption.
func (t *Tree) resolves(l *comment.DocLink) bool {
	var target *doc.Package
	if p, ok := t.byPath[l.ImportPath]; ok {
		target = p.doc
	} else if d, ok := t.stdPackage(l.ImportPath); ok {
		target = d
	} else {
		return true
	}
	if l.Name == "" {
		return true
	}
	text := l.Name
	if l.Recv != "" {
		text = l.Recv + "." + l.Name
	}
	return isDocLink(target.Parser().Parse("[" + text + "]"))
}

// isDocLink reports whether d is one doc link and nothing else.
func isDocLink(d *comment.Doc) bool {
	if len(d.Content) != 1 {
		return false
	}
	para, ok := d.Content[0].(*comment.Paragraph)
	if !ok || len(para.Text) != 1 {
		return false
	}
	_, ok = para.Text[0].(*comment.DocLink)
	return ok
}

// link reports whether text, bracketed, is a doc link of p that resolves.
func (t *Tree) link(p *Package, text string) bool {
	d := p.doc.Parser().Parse("[" + text + "]")
	if !isDocLink(d) {
		return false
	}
	l := d.Content[0].(*comment.Paragraph).Text[0].(*comment.DocLink)
	return l.ImportPath == "" || t.resolves(l)
}

// stdPackage loads a standard library package's docs from GOROOT.
func (t *Tree) stdPackage(importPath string) (*doc.Package, bool) {
	if d, ok := t.std[importPath]; ok {
		return d, d != nil
	}
	t.std[importPath] = nil
	dir := filepath.Join(build.Default.GOROOT, "src", filepath.FromSlash(importPath))
	if _, err := os.Stat(dir); err != nil {
		return nil, false
	}
	fset := token.NewFileSet()
	files, _, err := parseDir(fset, dir)
	if err != nil || len(files) == 0 {
		return nil, false
	}
	d, err := doc.NewFromFiles(fset, files, importPath, doc.PreserveAST)
	if err != nil {
		return nil, false
	}
	t.std[importPath] = d
	return d, true
}

// plain finds, in text go doc shows as plain, bracketed text meant as a
// doc link that does not resolve, and identifiers named without a link:
// pkg.Name where pkg is a package of the tree, an import or a standard
// package; an exported symbol of p with two capitals or more, or
// Type.Method; a refusal sentinel, code or error (ErrX, CodeX, *Error) named
// bare outside package refusal. Names in self (the documented identifier)
// are exempt.
func (t *Tree) plain(p *Package, s string, self []string) []finding {
	var out []finding
	for _, m := range bracketed.FindAllStringSubmatchIndex(s, -1) {
		if linkable(s[:m[0]], s[m[1]:]) {
			out = append(out, finding{kind: BrokenLink, detail: s[m[0]:m[1]] + ": go doc cannot resolve it", start: m[0], end: m[1]})
		}
	}
	taken := func(start, end int) bool {
		for _, f := range out {
			if start < f.end && f.start < end {
				return true
			}
		}
		return false
	}
	for _, m := range qualified.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > 0 && strings.ContainsRune("./-", rune(s[m[0]-1])) || taken(m[0], m[1]) {
			continue // a path, a longer selector
		}
		w := s[m[0]:m[1]]
		if !t.knownPackage(p, s[m[2]:m[3]]) || m[1] < len(s) && s[m[1]] == '[' || enclosed(s, m[0], m[1]) {
			continue // not a package; a generic instantiation no link can show
		}
		f := finding{kind: Unlinked, detail: w, start: m[0], end: m[1]}
		if t.link(p, w) {
			f.fix = "[" + w + "]"
		}
		out = append(out, f)
	}
	refusal := t.refusal(p)
	for _, m := range word.FindAllStringSubmatchIndex(s, -1) {
		if m[0] > 0 && strings.ContainsRune("./-", rune(s[m[0]-1])) || taken(m[0], m[1]) {
			continue
		}
		if m[1] < len(s) && strings.ContainsRune("-/", rune(s[m[1]])) {
			continue // part of a path or a code
		}
		if enclosed(s, m[0], m[1]) {
			continue
		}
		w := s[m[0]:m[1]]
		bare := strings.TrimPrefix(w, "*")
		first := s[m[2]:m[3]]
		if slices.Contains(self, bare) {
			continue
		}
		sentinel := m[4] < 0 && (isSentinel(first) || w == "*Error")
		if m[4] < 0 && !multiCap(first) && !sentinel && first != "Error" && first != "Code" {
			continue // a word with one capital reads as English
		}
		switch {
		case t.link(p, w):
			out = append(out, finding{kind: Unlinked, detail: w, start: m[0], end: m[1], fix: "[" + w + "]"})
		case sentinel && p.Name != "refusal":
			f := finding{kind: Unlinked, detail: w + ": a name of package refusal?", start: m[0], end: m[1]}
			if refusal != "" && t.link(p, strings.Replace(w, first, refusal+"."+first, 1)) {
				f.fix = "[" + strings.Replace(w, first, refusal+"."+first, 1) + "]"
			}
			out = append(out, f)
		}
	}
	return out
}

// enclosed reports whether s[start:end] is bracketed: a type argument, or
// bracketed text [Tree.plain] checks as such.
func enclosed(s string, start, end int) bool {
	return start > 0 && s[start-1] == '[' && end < len(s) && s[end] == ']'
}

// refusal returns the name under which p imports package refusal, or "".
func (t *Tree) refusal(p *Package) string {
	for _, imp := range p.doc.Imports {
		if strings.HasSuffix(imp, "/refusal") {
			if _, ok := t.byPath[imp]; ok {
				return "refusal"
			}
		}
	}
	return ""
}

func isSentinel(w string) bool {
	for _, prefix := range []string{"Err", "Code"} {
		if rest, ok := strings.CutPrefix(w, prefix); ok && rest != "" {
			r, _ := utf8.DecodeRuneInString(rest)
			return unicode.IsUpper(r)
		}
	}
	return false
}

// multiCap reports whether w has two capitals or more, as ParseEnvelope
// does and Window does not.
func multiCap(w string) bool {
	n := 0
	for _, r := range w {
		if unicode.IsUpper(r) {
			n++
		}
	}
	return n >= 2
}

// linkable applies go/doc/comment's rule for the text around a doc link.
func linkable(before, after string) bool {
	if before != "" {
		r, _ := utf8.DecodeLastRuneInString(before)
		if !unicode.IsPunct(r) && !unicode.IsSpace(r) {
			return false
		}
	}
	if after != "" {
		r, _ := utf8.DecodeRuneInString(after)
		if !unicode.IsPunct(r) && !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

// knownPackage reports whether name is the name of a package of the tree,
// one the package imports, or one of the standard library that go doc
// links by name.
func (t *Tree) knownPackage(p *Package, name string) bool {
	for _, q := range t.Packages {
		if q.Name == name {
			return true
		}
	}
	if _, ok := p.doc.Parser().LookupPackage(name); ok {
		return true
	}
	_, ok := comment.DefaultLookupPackage(name)
	return ok
}
