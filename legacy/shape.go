package legacy

import (
	"math"
	"slices"
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
)

// shape reads the members of one JSON object, as jsjson parsed it, by the
// reference's type of it (docs/contract.md section 2.4): each reader
// returns the member, and the first member that does not fit is remembered
// in bad, its JSON pointer (at is the object's own). A required member must
// be present with its JSON type; an optional one absent or of its type,
// null being a value of no type but unknown. Readers of optional members
// return nil when the member is absent.
//
// The object's JSON text is needed only to keep members its type does not
// name (unknown). The root's member texts are given (spans, parsed), a
// card's or usage's text too; a shape without text that meets such
// members only notes it in extra, which adopt passes up, and the caller
// reads the object again with kept set, in which each nested shape gets
// its text from its parent's (child, elem). So a frame without unknown
// members below the card costs nothing more, and no shape points at
// another, which keeps them all on the stack.
type shape struct {
	m   map[string]any
	at  string
	bad string

	kept   bool         // nested shapes get their text
	extra  bool         // an object without text has unknown members
	text   []byte       // the object's JSON text, nil when not known
	spans  jsjson.Spans // its members' texts, once parsed
	parsed bool

	elemsOf string   // the array member whose elements' texts elems holds
	elems   [][]byte // for the elements of an array member
}

// unknown returns the members of the object not in known, its type's
// names (keptMembers), or nil when every member is known or the object's
// text is not known (extra is then set).
func (s *shape) unknown(known []string) []chatprotocol.Member {
	n := 0
	for _, k := range known {
		if _, ok := s.m[k]; ok {
			n++
		}
	}
	if n == len(s.m) {
		return nil
	}
	if s.text == nil && !s.parsed {
		s.extra = true
		return nil
	}
	return keptMembers(s.memberSpans(), known)
}

// memberSpans returns the texts of the object's members.
func (s *shape) memberSpans() jsjson.Spans {
	if !s.parsed {
		_, s.spans, _ = jsjson.ParseObject(s.text)
		s.parsed = true
	}
	return s.spans
}

// elements returns the texts of the elements of the array member name.
func (s *shape) elements(name string) [][]byte {
	if s.elems != nil && s.elemsOf == name {
		return s.elems
	}
	arr := s.memberSpans().Get(name)
	s.elemsOf, s.elems = name, [][]byte{}
	text := string(arr)
	i := 1 // after '['
	for i < len(text) {
		for i < len(text) && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n' || text[i] == ',') {
			i++
		}
		_, n, ok := jsjson.ParsePrefix(text[i:])
		if !ok {
			break // the closing ']'
		}
		s.elems = append(s.elems, arr[i:i+n])
		i += n
	}
	return s.elems
}

// child returns the shape of m, the object member name of s, with its
// text when s is kept.
func (s *shape) child(name string, m map[string]any) shape {
	c := shape{m: m, at: s.at + "/" + name, kept: s.kept}
	if s.kept {
		c.text = s.memberSpans().Get(name)
	}
	return c
}

// misfit remembers member name as the first that does not fit.
func (s *shape) misfit(name string) {
	if s.bad == "" {
		s.bad = s.at + "/" + name
	}
}

// member returns the member's value and whether it is present; a missing
// required member is a misfit.
func (s *shape) member(name string, required bool) (any, bool) {
	v, ok := s.m[name]
	if !ok && required {
		s.misfit(name)
	}
	return v, ok
}

// str reads a required string.
func (s *shape) str(name string) string {
	v, _ := s.member(name, true)
	return s.asString(name, v)
}

func (s *shape) optStr(name string) *string { return optional(s, name, (*shape).asString) }

func (s *shape) asString(name string, v any) string {
	str, _ := typed[string](s, name, v)
	return str
}

// num reads a required number: any finite JSON number.
func (s *shape) num(name string) float64 {
	v, _ := s.member(name, true)
	return s.asNumber(name, v)
}

func (s *shape) optNum(name string) *float64 { return optional(s, name, (*shape).asNumber) }

func (s *shape) asNumber(name string, v any) float64 {
	n, ok := v.(float64)
	if !ok || math.IsInf(n, 0) {
		s.misfit(name)
	}
	return n
}

func (s *shape) optBool(name string) *bool { return optional(s, name, (*shape).asBool) }

func (s *shape) asBool(name string, v any) bool {
	b, _ := typed[bool](s, name, v)
	return b
}

// optional reads an optional member by as (asString, asNumber, asBool):
// nil when it is absent.
func optional[T any](s *shape, name string, as func(s *shape, name string, v any) T) *T {
	v, ok := s.member(name, false)
	if !ok {
		return nil
	}
	t := as(s, name, v)
	return &t
}

// typed returns v as a T and whether it is one; a value of another type
// (null included) is a misfit.
func typed[T any](s *shape, name string, v any) (T, bool) {
	t, ok := v.(T)
	if !ok {
		s.misfit(name)
	}
	return t, ok
}

// enum reads a required string that must be one of literals.
func (s *shape) enum(name string, literals []string) string {
	str := s.str(name)
	if !slices.Contains(literals, str) {
		s.misfit(name)
	}
	return str
}

func (s *shape) optEnum(name string, literals []string) *string {
	str := s.optStr(name)
	if str != nil && !slices.Contains(literals, *str) {
		s.misfit(name)
	}
	return str
}

// object reads a required object.
func (s *shape) object(name string) (map[string]any, bool) {
	v, _ := s.member(name, true)
	m, ok := v.(map[string]any)
	if !ok {
		s.misfit(name)
	}
	return m, ok
}

// optObject reads an optional object; ok is false when it is absent or
// does not fit.
func (s *shape) optObject(name string) (map[string]any, bool) {
	v, ok := s.member(name, false)
	if !ok {
		return nil, false
	}
	m, ok := v.(map[string]any)
	if !ok {
		s.misfit(name)
	}
	return m, ok
}

// optArray reads an optional array; ok is false when it is absent or does
// not fit.
func (s *shape) optArray(name string) ([]any, bool) {
	v, ok := s.member(name, false)
	if !ok {
		return nil, false
	}
	a, ok := v.([]any)
	if !ok {
		s.misfit(name)
	}
	return a, ok
}

// array reads a required array.
func (s *shape) array(name string) ([]any, bool) {
	v, _ := s.member(name, true)
	a, ok := v.([]any)
	if !ok {
		s.misfit(name)
	}
	return a, ok
}

// elem returns the shape of element i of the array member name, an object,
// or ok false (a misfit at that element) when it is not one.
func (s *shape) elem(name string, i int, v any) (shape, bool) {
	at := s.at + "/" + name + "/" + strconv.Itoa(i)
	m, ok := v.(map[string]any)
	if !ok && s.bad == "" {
		s.bad = at
	}
	c := shape{m: m, at: at, kept: s.kept}
	if s.kept {
		if elems := s.elements(name); i < len(elems) {
			c.text = elems[i]
		}
	}
	return c, ok
}

// nextObject steps through arr, the array member name of s, whose
// elements must be objects, each read into e, a shape the caller holds (not
// a callback's, so that every shape stays on the stack): called with i from
// 0, it passes the misfit and unknown members of element i-1, which e
// holds, up to s (adopt), and reads element i into e. It is false after the
// last element, or at the first one that is not an object (a misfit of s).
func (s *shape) nextObject(name string, arr []any, i int, e *shape) bool {
	if i > 0 {
		s.adopt(e)
	}
	if i >= len(arr) {
		return false
	}
	var ok bool
	*e, ok = s.elem(name, i, arr[i])
	return ok
}

// adopt takes the misfit of a nested shape, if it is the first, and
// whether it met unknown members it could not keep.
func (s *shape) adopt(inner *shape) {
	if s.bad == "" {
		s.bad = inner.bad
	}
	s.extra = s.extra || inner.extra
}
