package chatprotocol_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

// aliasDocs returns the doc comment of every type alias declared in file.
func aliasDocs(t *testing.T, file string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ParseComments)
	require.NoError(t, err)
	docs := map[string]string{}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.TYPE {
			continue
		}
		for _, spec := range gen.Specs {
			ts := spec.(*ast.TypeSpec)
			if !ts.Assign.IsValid() {
				continue
			}
			doc := ts.Doc
			if doc == nil && !gen.Lparen.IsValid() {
				doc = gen.Doc // type X = Y, outside a group
			}
			docs[ts.Name.Name] = doc.Text()
		}
	}
	return docs
}

// assertDocNamesFields checks that the doc comment of the alias name, which
// go doc shows without the fields of the internal type it aliases, names
// every exported field of typ with its JSON name.
func assertDocNamesFields(t *testing.T, docs map[string]string, name string, typ reflect.Type) {
	t.Helper()
	doc, ok := docs[name]
	require.True(t, ok, "%s is an alias in the file", name)
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() || f.Anonymous {
			continue
		}
		assert.Regexp(t, `\b`+f.Name+`\b`, doc, "%s: field %s", name, f.Name)
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
			assert.Contains(t, doc, `"`+tag+`"`, "%s: JSON name of %s", name, f.Name)
		}
	}
}

// TestCardAliasDocsNameEveryField: the card types live in an internal
// package, so their aliases' comments are the only place go doc shows
// their fields; they must not drift from the types.
func TestCardAliasDocsNameEveryField(t *testing.T) {
	docs := aliasDocs(t, "cards.go")
	for name, typ := range map[string]reflect.Type{
		"CardSpec":         reflect.TypeFor[chatprotocol.CardSpec](),
		"CardPresentation": reflect.TypeFor[chatprotocol.CardPresentation](),
		"CardOption":       reflect.TypeFor[chatprotocol.CardOption](),
		"OpenCardSnapshot": reflect.TypeFor[chatprotocol.OpenCardSnapshot](),
		"CardResponse":     reflect.TypeFor[chatprotocol.CardResponse](),
		"CardBound":        reflect.TypeFor[chatprotocol.CardBound](),
	} {
		assertDocNamesFields(t, docs, name, typ)
	}
}
