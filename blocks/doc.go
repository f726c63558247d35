// Package blocks reads and writes the structured blocks that models embed in
// their turn text: <report>{json}</report> (a [ReportBlock], a two-tier
// plan/item status list) and <ask>{json}</ask> (an [AskBlock], a durable
// question to the owner), as docs/contract.md section 4 describes.
//
// # Parsers
//
// There are three layers, each tolerant in the manner of the TypeScript
// reference (@papercusp/chat-protocol): it never panics, and malformed input
// gives no block (ok == false) rather than an error.
//
//   - [ParseReportBlock] and [ParseAskBlock] read a decoded JSON value
//     (map[string]any …) field by field: ECMAScript trim, blank and
//     non-string values dropped, the title/slug, text/id and label/id
//     fallbacks, empty lists omitted. Their documentation gives each rule.
//   - [ParseReportBody] and [ParseAskBody] read the JSON text between the tags.
//   - [ParseReportTag] and [ParseAskTag] find the first tag in raw turn text.
//   - [FindTags] finds every tag of both kinds in raw turn text, with its
//     position, for a turn that carries several (`chatwire blocks` prints
//     them).
//
// The answers are those of the reference on the same bytes: the module's
// tests require the reference's exact output for every line of
// the module's testdata/blocks-parity.jsonl, and `chatwire parse KIND` prints the same.
//
// # Reading text as the reference does
//
// The reference runs in a browser or Node: its input is a JavaScript string
// and its JSON reader is JSON.parse. The Go parsers read a Go string the same
// way (package internal/jsjson):
//
//   - Invalid UTF-8 is read as U+FFFD, one per maximal subpart, as a
//     TextDecoder would have decoded the bytes. A byte order mark is a
//     character: it is not JSON whitespace (only space, tab, LF and CR are),
//     so a body that starts with one gives no block.
//   - Duplicate member names are not an error: the last one wins. Names are
//     case-sensitive: "Question" is not "question".
//   - A number outside the float64 range is not a syntax error (1e400 is
//     Infinity); since only strings are kept, it is simply dropped.
//   - Nesting depth is unlimited, as in V8's JSON.parse.
//   - "Blank" and "trimmed" use ECMAScript String.prototype.trim's
//     whitespace set, which removes U+FEFF and U+00A0 but not U+0085 or
//     U+200B ([unicode.IsSpace] differs on both).
//   - A JSON escape of a lone UTF-16 surrogate (\ud800) is kept, as the
//     reference keeps it, in its three-byte WTF-8 form; such a string is not
//     valid UTF-8. MarshalJSON writes it back as \ud800, as JSON.stringify
//     does.
//
// # Tags
//
// The reference finds a tag with the regular expression
// /<ask>([\s\S]*?)<\/ask>/i, trims the captured body with
// String.prototype.trim and gives it to JSON.parse. The Go tag parsers keep
// everything that rule decides where the cases are silent:
//
//   - The tags are exactly <ask>, </ask>, <report> and </report>, without
//     spaces or attributes, with ASCII letters in any case (<ASK>, <Ask>).
//     Non-ASCII look-alikes never match: without the u flag, ECMAScript case
//     folding does not map "ſ" to "s" or the Kelvin sign to "k".
//   - Only the first opening tag counts. If it is not followed by a valid
//     block, the answer is no block, even when a later tag holds one.
//   - ECMAScript whitespace (the trim set above, wider than JSON's) may
//     stand between the opening tag, the JSON value and the closing tag.
//   - Text before and after the block is ignored.
//
// One deliberate improvement over the reference (docs/contract.md section 4):
// the parser reads the JSON value that follows the opening tag and then
// expects the closing tag, so a closing tag inside a JSON string
// ({"question":"what does </ask> do?"}) does not cut the block short. The
// two readings differ only on such input; everywhere else the answers are
// the same.
//
// # Serializers
//
// [SerializeAskTag] and [SerializeReportTag] write a block as its tag, with '<',
// '>' and '&' escaped inside the JSON (\u003c …) so the tag text never
// contains a closing tag: every serialized tag reads back through the
// parsers, this package's and the reference's alike. The reference's
// serializeAskTag does not escape, so a question containing "</ask>" does
// not round-trip there.
//
// MarshalJSON writes a block in the reference's canonical JSON, byte for
// byte what JSON.stringify writes for it. Note that encoding/json.Marshal
// escapes '<', '>' and '&' in a MarshalJSON result (unless used through an
// Encoder with SetEscapeHTML(false)); call MarshalJSON directly for the
// exact bytes.
//
// All functions are safe for concurrent use.
package blocks
