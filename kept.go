package chatprotocol

import (
	"errors"
	"reflect"
	"slices"

	"github.com/go-json-experiment/json"

	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
)

// Cards (section 3) and report and ask blocks (section 4) have Go types of
// their own, shared with version 0, that hold no unknown members. Inside a
// version-1 event they are decoded from their JSON and the JSON is kept
// beside the value: Marshal re-emits it, members unknown to this version
// included, as long as the value still equals what the JSON decodes to.

// decodeKept decodes raw, a card or block object, into dst. Member names
// match exactly and duplicates are refused by the decoder; two names of one
// object that differ only by case are refused here, because the kept JSON is
// re-emitted and a case-folding consumer would read either (section 5).
func decodeKept(raw []byte, dst any, code Code, path string) error {
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return refuseWrap(CodeInvalidEnvelope, path, "not one strict JSON value", err)
	}
	if p, ok := foldCollision(tree, path); ok {
		return refusef(CodeInvalidEnvelope, p, "member name differs from another of the same object only by case")
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		if se, ok := errors.AsType[*json.SemanticError](err); ok {
			return refuseWrap(code, path+string(se.JSONPointer), "wrong type or value", err)
		}
		return refuseWrap(code, path, "wrong type or value", err)
	}
	return nil
}

// foldCollision looks for an object in v holding two names that are equal
// under Unicode simple case folding but not identical, and returns the
// pointer of the least such name (in byte order) of the first such object,
// objects visited depth first with members in byte order. Its time is
// linear in the number of names: names are grouped by foldKey, never
// compared pairwise.
func foldCollision(v any, path string) (string, bool) {
	switch v := v.(type) {
	case map[string]any:
		names := make([]string, 0, len(v))
		for name := range v {
			names = append(names, name)
		}
		slices.Sort(names)
		if least, ok := leastFoldVariant(names); ok {
			return path + "/" + escapePointer(least), true
		}
		for _, name := range names {
			if p, ok := foldCollision(v[name], path+"/"+escapePointer(name)); ok {
				return p, true
			}
		}
	case []any:
		for i, e := range v {
			if p, ok := foldCollision(e, path+"/"+itoa(i)); ok {
				return p, true
			}
		}
	}
	return "", false
}

// leastFoldVariant returns the least of the sorted names that has a case
// variant among them.
func leastFoldVariant(sorted []string) (string, bool) {
	if len(sorted) < 2 {
		return "", false
	}
	groups := make(map[string]int, len(sorted)) // fold key -> names in its group
	for _, name := range sorted {
		groups[foldKey(name)]++
	}
	for _, name := range sorted {
		if groups[foldKey(name)] > 1 {
			return name, true
		}
	}
	return "", false
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
