// Package jsjson reads and writes JSON text the way a browser does: bytes
// decoded as a TextDecoder("utf-8") decodes them, values read as ECMAScript
// JSON.parse reads them, strings written as JSON.stringify writes them, and
// String.prototype.trim's whitespace set. The version-0 parsers of the
// module (package legacy's reader and adapters, and the blocks parsers) use
// it so that they answer as the TypeScript reference does on the same bytes
// (docs/contract.md sections 2, 4 and 15).
//
// It is not a strict decoder: version-1 envelopes are read by package
// internal/strictjson, which refuses what this package accepts.
//
// # What JSON.parse does and encoding/json does not
//
//   - Duplicate member names are not an error: the last one wins.
//   - Member names are matched exactly (values are maps, so there is no
//     case-insensitive field matching).
//   - A number outside the float64 range is not an error: 1e400 is +Inf,
//     1e-400 is 0.
//   - Nesting depth is unlimited (V8's JSON.parse is not recursive); the
//     reader here keeps its own stack, so depth costs heap, not Go stack.
//   - Invalid UTF-8 becomes U+FFFD, one per maximal subpart (the WHATWG
//     Encoding Standard's rule, which differs from Go's one-per-byte), and a
//     byte order mark is a character, not whitespace: only space, tab, LF
//     and CR are JSON whitespace.
//   - A \u escape of a lone UTF-16 surrogate (\ud800) is a valid JSON.parse
//     string. Go strings cannot hold a lone surrogate as UTF-8, so it is
//     kept as its three-byte generalized UTF-8 form (WTF-8: ED A0 80), and
//     [AppendString] writes that back as \ud800, exactly as JSON.stringify
//     writes a lone surrogate. Such a string is not valid UTF-8; a pair of
//     escapes that forms a surrogate pair becomes the one 4-byte rune.
//
// # Values
//
// [Parse] returns the Go forms encoding/json uses for an interface value:
// nil, bool, float64, string, []any and map[string]any. Empty arrays and
// objects are non-nil. Values parsed from a []byte share no memory with it.
//
// All functions are safe for concurrent use; none keeps state.
package jsjson
