package blocks

import "github.com/Papercusp/chat-protocol-go/internal/jsjson"

// object returns v as a JSON object, as `v && typeof v === 'object' &&
// !Array.isArray(v)` selects one in the reference. Arrays, which the
// reference lets through its nested `typeof === 'object'` checks, have none
// of the members the parsers read, so treating them as "not an object" gives
// the same answers.
func object(v any) (map[string]any, bool) {
	m, ok := v.(map[string]any)
	return m, ok
}

// objects is what build makes of each element of raw that is an object
// (see object), in order, leaving out those build answers false for; nil
// when none is left.
func objects[T any](raw []any, build func(rec map[string]any) (T, bool)) []T {
	var out []T
	for _, v := range raw {
		rec, ok := object(v)
		if !ok {
			continue
		}
		if t, ok := build(rec); ok {
			out = append(out, t)
		}
	}
	return out
}

// str is the reference's one field rule: a string, trimmed as
// String.prototype.trim trims, kept only when something is left. Any other
// JSON type gives "".
func str(v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	return jsjson.Trim(s)
}

// or returns a, or b when a is "" (the reference's `a ?? b` over str).
func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
