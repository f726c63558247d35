// Package strictjson is the JSON machinery behind the version-1 envelope
// codec: a pooled, allocation-free reader over github.com/go-json-experiment's
// jsontext tokenizer, and the append helpers the canonical encoder writes
// with. It exists so that the root package's parsers stay short and its API
// never shows the dependency's types.
//
// The reader is strict in the manner of RFC 7493 (the tokenizer's default):
// duplicate member names and invalid UTF-8 are syntax errors, member names
// match byte for byte, and one JSON text with optional surrounding
// whitespace is the whole input. On top of that it bounds nesting depth
// ([ErrTooDeep]) and reads integers exactly (Integer never rounds).
// [FoldCollision] finds the member names a case-folding decoder would
// merge, which the module's readers refuse.
//
// Strings are returned as substrings of one copy of the input that the
// caller makes and passes in, so reading a string without escapes allocates
// nothing. Decoders are not safe for concurrent use; [Get] and [Put] recycle
// them through a [sync.Pool], which is a cache and holds no behaviour.
package strictjson
