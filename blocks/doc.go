// Package blocks reads and writes the structured blocks that models embed in
// their turn text: <report>{json}</report> (a [ReportBlock], a two-tier
// plan/item status list) and <ask>{json}</ask> (an [AskBlock], a durable
// question to the owner), as docs/contract.md section 4 describes.
//
// # Parsers
//
// There are three layers, each tolerant in the manner of the TypeScript
// reference (section 4.1): it never panics, and malformed input gives no
// block (ok == false) rather than an error.
//
//   - [ParseReportBlock] and [ParseAskBlock] read a decoded JSON value
//     (map[string]any …) field by field: ECMAScript trim, blank and
//     non-string values dropped, the title/slug, text/id and label/id
//     fallbacks, empty lists omitted. Their documentation gives each rule.
//   - [ParseReportBody] and [ParseAskBody] read the JSON text between the
//     tags.
//   - [ParseReportTag] and [ParseAskTag] find the first tag in raw turn
//     text; [FindTags] finds every tag of both kinds, with its position.
//
// The answers are those of the reference on the same bytes (section 4.2):
// every line of testdata/blocks-parity.jsonl is checked by the tests, and
// `chatwire parse KIND` prints the same. Text is read as a browser reads it
// (section 2.4, package internal/jsjson): invalid UTF-8 as U+FFFD, a byte
// order mark as a character, duplicate names last-one-wins, names
// case-sensitive, 1e400 as Infinity, no depth limit, a lone surrogate
// escape kept in its WTF-8 form. "Blank" and "trimmed" use ECMAScript
// String.prototype.trim's whitespace set ([unicode.IsSpace] differs on
// U+0085 and U+200B).
//
// # Tags
//
// The tags are exactly <ask>, </ask>, <report> and </report>, ASCII letters
// in any case; only the first opening tag of a kind counts; ECMAScript
// whitespace may stand between the tags and the value, and text around the
// block is ignored (section 4.3). The parser reads the JSON value after the
// opening tag, then expects the closing tag, so a closing tag inside a JSON
// string does not cut the block short (section 4.4).
//
// # Serializers
//
// [SerializeAskTag] and [SerializeReportTag] write a block as its tag, with
// '<', '>' and '&' escaped inside the JSON (\u003c …), so every serialized
// tag reads back through this package's parsers and the reference's
// (section 4.4). [ReportBlock.MarshalJSON] and [AskBlock.MarshalJSON] write
// a block in the reference's canonical JSON, byte for byte what
// JSON.stringify writes for it; [encoding/json.Marshal] escapes '<', '>' and
// '&' in that result (unless through an [encoding/json.Encoder] with
// SetEscapeHTML(false)), so call MarshalJSON directly for the exact bytes.
//
// All functions are safe for concurrent use.
package blocks
