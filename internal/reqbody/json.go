package reqbody

import (
	"errors"
	"reflect"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// maxDepth bounds the nesting of a request body: 10,000, the limit of the
// encoding/json/v2 API's decoder.
const maxDepth = 10000

// Unmarshal reads body, a request's, into v, a pointer, strictly
// (docs/contract.md sections 12.6 and 15): body passes [CheckNames] with
// v's type, so that no name of an object differs only by case from another
// of its names or from a member v's struct defines for it; then the
// encoding/json/v2 API reads it with its default options (duplicated names
// anywhere, invalid UTF-8 and lone surrogate escapes refused, members
// matched in their case only, unknown members read and passed over).
//
// Errors: a [*refusal.Error] of code invalid-input, with the JSON pointer
// of the refused name or value where one is known.
func Unmarshal(body []byte, v any) error {
	if err := checkNames(body, reflect.TypeOf(v)); err != nil {
		return err
	}
	if err := jsonv2.Unmarshal(body, v); err != nil {
		path := ""
		if se, ok := errors.AsType[*jsonv2.SemanticError](err); ok {
			path = string(se.JSONPointer)
		}
		return refusal.Wrap(refusal.CodeInvalidInput, path, "the body is not the request's JSON", err)
	}
	return nil
}

// CheckNames refuses body unless it is one strict JSON value (valid UTF-8,
// no name twice in an object, nesting at most 10,000 deep) of which no
// object holds two names equal under Unicode simple case folding ("id"
// and "ID", "s" and "ſ"), at any depth. Errors: a [*refusal.Error] of
// code invalid-input, with the pointer of the least such name of the first
// such object, or of the value where the JSON stopped being strict.
func CheckNames(body []byte) error { return checkNames(body, nil) }

// checkNames is CheckNames, also comparing the names of each object that
// type t decodes into a struct with that struct's members.
func checkNames(body []byte, t reflect.Type) error {
	p, found, err := strictjson.FoldCollision(body, t, maxDepth)
	switch {
	case err != nil:
		path := ""
		if se, ok := errors.AsType[*strictjson.SyntaxError](err); ok {
			path = se.Pointer
		}
		return refusal.Wrap(refusal.CodeInvalidInput, path, "the body is not one strict JSON value", err)
	case found:
		return refusal.New(refusal.CodeInvalidInput, p, "a member name differs only by case from another of its object, or from a member of the request")
	}
	return nil
}
