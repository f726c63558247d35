package legacy

import (
	"math"
	"slices"
	"strconv"
)

// shape reads the members of one JSON object, as jsjson parsed it, by the
// reference's type of it (docs/contract.md section 2.4): each reader
// returns the member, and the first member that does not fit is remembered
// in bad, its JSON pointer (at is the object's own). A required member must
// be present with its JSON type; an optional one absent or of its type,
// null being a value of no type but unknown. Readers of optional members
// return nil when the member is absent.
type shape struct {
	m   map[string]any
	at  string
	bad string
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

func (s *shape) str(name string) string {
	v, _ := s.member(name, true)
	return s.asString(name, v)
}

func (s *shape) optStr(name string) *string {
	v, ok := s.member(name, false)
	if !ok {
		return nil
	}
	str := s.asString(name, v)
	return &str
}

func (s *shape) asString(name string, v any) string {
	str, ok := v.(string)
	if !ok {
		s.misfit(name)
	}
	return str
}

// num reads a required number: any finite JSON number.
func (s *shape) num(name string) float64 {
	v, _ := s.member(name, true)
	return s.asNumber(name, v)
}

func (s *shape) optNum(name string) *float64 {
	v, ok := s.member(name, false)
	if !ok {
		return nil
	}
	n := s.asNumber(name, v)
	return &n
}

func (s *shape) asNumber(name string, v any) float64 {
	n, ok := v.(float64)
	if !ok || math.IsInf(n, 0) {
		s.misfit(name)
	}
	return n
}

func (s *shape) optBool(name string) *bool {
	v, ok := s.member(name, false)
	if !ok {
		return nil
	}
	b, ok := v.(bool)
	if !ok {
		s.misfit(name)
	}
	return &b
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
	return shape{m: m, at: at}, ok
}

// adopt takes the misfit of a nested shape, if it is the first.
func (s *shape) adopt(inner *shape) {
	if s.bad == "" {
		s.bad = inner.bad
	}
}
