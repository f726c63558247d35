package chatprotocol

import (
	"cmp"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
)

// Cards (section 3) and report and ask blocks (section 4) have Go types of
// their own, shared with version 0, that hold no unknown members. Inside a
// version-1 event they are decoded from their JSON and the JSON is kept
// beside the value: Marshal re-emits it, members unknown to this version
// included, as long as the value still equals what the JSON decodes to.

// decodeKept decodes raw, a card or block object, into dst. Member names
// match exactly and duplicates are refused by the decoder; a name that
// differs only by case from another name of the same object, or from a
// member the object's Go type defines, is refused here, because the kept
// JSON is re-emitted and a case-folding consumer would read it as that
// member (section 5), as ParseEnvelope refuses "TYPE" beside or instead of
// "type".
func decodeKept(raw []byte, dst any, code Code, path string) error {
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return refuseWrap(CodeInvalidEnvelope, path, "not one strict JSON value", err)
	}
	if p, ok := foldCollision(tree, reflect.TypeOf(dst), path); ok {
		return refusef(CodeInvalidEnvelope, p, "member name differs from another name of the object, or from a member of the contract, only by case")
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		if se, ok := errors.AsType[*json.SemanticError](err); ok {
			return refuseWrap(code, path+string(se.JSONPointer), "wrong type or value", err)
		}
		return refuseWrap(code, path, "wrong type or value", err)
	}
	return nil
}

// foldCollision looks in v, a JSON value decoded into any, for a member name
// that is equal under Unicode simple case folding, but not identical, to
// another name of the same object or to a member name of the Go type t the
// value is decoded into (nil when the value is not decoded into a struct:
// then only the object's own names count). It returns the pointer of the
// least such name (in byte order) of the first such object, objects visited
// depth first with members in byte order. Its time is linear in the number
// of names: names are grouped by foldKey, never compared pairwise.
func foldCollision(v any, t reflect.Type, path string) (string, bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch v := v.(type) {
	case map[string]any:
		known := jsonMembers(t)
		names := make([]string, 0, len(v))
		for name := range v {
			names = append(names, name)
		}
		slices.Sort(names)
		if least, ok := leastFoldVariant(names, known); ok {
			return path + "/" + escapePointer(least), true
		}
		for _, name := range names {
			if p, ok := foldCollision(v[name], known[name], path+"/"+escapePointer(name)); ok {
				return p, true
			}
		}
	case []any:
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i, e := range v {
			if p, ok := foldCollision(e, elem, path+"/"+itoa(i)); ok {
				return p, true
			}
		}
	}
	return "", false
}

// leastFoldVariant returns the least of the sorted names that is a case
// variant of another of them, or of a known name it is not itself.
func leastFoldVariant(sorted []string, known map[string]reflect.Type) (string, bool) {
	if len(sorted) < 2 && len(known) == 0 {
		return "", false
	}
	names := make(map[string]int, len(sorted)) // fold key -> names of the object
	for _, name := range sorted {
		names[foldKey(name)]++
	}
	knownKeys := make(map[string]bool, len(known))
	for name := range known {
		knownKeys[foldKey(name)] = true
	}
	for _, name := range sorted {
		key := foldKey(name)
		if _, exact := known[name]; names[key] > 1 || (knownKeys[key] && !exact) {
			return name, true
		}
	}
	return "", false
}

// jsonMembers returns the member names the JSON decoder reads into the
// struct type t, each with the Go type of its value: the json tag's name
// (the field's name without one), the fields of an embedded struct
// without a name inlined. It returns nil for any type but a struct, and
// for a struct that decodes itself (an UnmarshalJSON method).
func jsonMembers(t reflect.Type) map[string]reflect.Type {
	selfDecoding := reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }]()
	if t == nil || t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(selfDecoding) {
		return nil
	}
	members := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if name == "" && f.Anonymous && ft.Kind() == reflect.Struct {
			maps.Copy(members, jsonMembers(ft))
			continue
		}
		members[cmp.Or(name, f.Name)] = f.Type
	}
	return members
}

// appendKept writes v: the kept JSON when v still equals what it decodes
// to, else v's canonical encoding (members in the Go type's order, absent
// ones omitted).
func appendKept[T any](dst []byte, v *T, kept []byte) ([]byte, error) {
	if kept != nil {
		var orig T
		if json.Unmarshal(kept, &orig) == nil && reflect.DeepEqual(&orig, v) {
			return strictjson.AppendRaw(dst, kept)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}
