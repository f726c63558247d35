package strictjson

import (
	"cmp"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-json-experiment/json/jsontext"
)

// FoldCollision reads raw, one strict JSON value (nesting at most
// maxDepth) decoded into a Go value of type t, looking for a member name
// that is equal under Unicode simple case folding, but not identical, to
// another name of the same object or to a member name of the Go struct the
// object is decoded into (none when it is not decoded into a struct, t nil
// included: then only the object's own names count). A consumer whose
// decoder folds case (encoding/json) would read such a name as the other
// member (docs/contract.md sections 5.3 and 15).
//
// It returns the JSON pointer (RFC 6901), relative to raw, of the least
// such name (in byte order) of the first such object, an object's own
// names checked before its members' values, which are taken in name order.
// Its time is linear in the size of raw: names are grouped by [FoldKey],
// never compared pairwise. err reports JSON that is not strict, a
// duplicated name included (a [*SyntaxError]).
func FoldCollision(raw []byte, t reflect.Type, maxDepth int) (pointer string, found bool, err error) {
	d := Get(raw, "", 0, 0, maxDepth)
	defer Put(d)
	pointer, found, err = foldWalk(d, t)
	if err == nil {
		err = d.Finish()
	}
	return pointer, found, err
}

// foldWalk reads the next value of d for FoldCollision.
func foldWalk(d *Decoder, t reflect.Type) (string, bool, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch d.Peek() {
	case '{':
		if err := d.Begin('{'); err != nil {
			return "", false, err
		}
		known := jsonMembers(t)
		var names []string
		var inner, innerName string
		var innerFound bool
		for d.More() {
			n, err := d.Name()
			if err != nil {
				return "", false, err
			}
			name := string(n)
			names = append(names, name)
			p, ok, err := foldWalk(d, known[name])
			if err != nil {
				return "", false, err
			}
			if ok && (!innerFound || name < innerName) {
				inner, innerName, innerFound = "/"+EscapePointer(name)+p, name, true
			}
		}
		if err := d.End(); err != nil {
			return "", false, err
		}
		slices.Sort(names)
		if least, ok := leastFoldVariant(names, known); ok {
			return "/" + EscapePointer(least), true, nil
		}
		return inner, innerFound, nil
	case '[':
		if err := d.Begin('['); err != nil {
			return "", false, err
		}
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		var inner string
		var innerFound bool
		for i := 0; d.More(); i++ {
			p, ok, err := foldWalk(d, elem)
			if err != nil {
				return "", false, err
			}
			if ok && !innerFound {
				inner, innerFound = "/"+strconv.Itoa(i)+p, true
			}
		}
		if err := d.End(); err != nil {
			return "", false, err
		}
		return inner, innerFound, nil
	}
	return "", false, d.Skip()
}

// leastFoldVariant returns the least of the sorted names that is a case
// variant of another of them, or of a known name it is not itself.
func leastFoldVariant(sorted []string, known map[string]reflect.Type) (string, bool) {
	if len(sorted) < 2 && len(known) == 0 {
		return "", false
	}
	names := make(map[string]int, len(sorted)) // fold key -> names of the object
	for _, name := range sorted {
		names[FoldKey(name)]++
	}
	knownKeys := make(map[string]bool, len(known))
	for name := range known {
		knownKeys[FoldKey(name)] = true
	}
	for _, name := range sorted {
		key := FoldKey(name)
		if _, exact := known[name]; names[key] > 1 || (knownKeys[key] && !exact) {
			return name, true
		}
	}
	return "", false
}

// jsonMembers returns the member names a JSON decoder reads into the
// struct type t, each with the Go type of its value: the json tag's name
// (the field's name without one), the fields of an embedded struct
// without a name, or of one tagged inline, inlined. It returns nil for any
// type but a struct, and for a struct that decodes itself (an
// UnmarshalJSON or UnmarshalJSONFrom method).
func jsonMembers(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	if p := reflect.PointerTo(t); p.Implements(reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()) ||
		p.Implements(reflect.TypeFor[interface{ UnmarshalJSONFrom(*jsontext.Decoder) error }]()) {
		return nil
	}
	members := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		inline := f.Anonymous || slices.Contains(strings.Split(opts, ","), "inline")
		if name == "" && inline && ft.Kind() == reflect.Struct {
			maps.Copy(members, jsonMembers(ft))
			continue
		}
		members[cmp.Or(name, f.Name)] = f.Type
	}
	return members
}

// FoldKey returns s with every rune replaced by the least rune of its
// Unicode simple folding orbit, so that for valid UTF-8
// [strings.EqualFold](a, b) holds exactly when FoldKey(a) == FoldKey(b):
// names can be grouped by case variant in a map instead of compared
// pairwise.
func FoldKey(s string) string {
	return strings.Map(func(r rune) rune {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		return least
	}, s)
}
