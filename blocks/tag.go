package blocks

import (
	"github.com/Papercusp/chat-protocol-go/internal/jsjson"
)

// The tag names of docs/contract.md section 4.
const (
	askTag    = "ask"
	reportTag = "report"
)

// ParseAskTag finds the first <ask>{json}</ask> block in raw turn text and
// reads it, by the tag rules of docs/contract.md section 4.3. Text
// without an opening tag, or whose first opening tag is not followed by a
// JSON value and the closing tag, gives no block; so does a value that
// [ParseAskBlock] refuses. Later tags are not tried. ParseAskTag never panics.
func ParseAskTag(text string) (AskBlock, bool) {
	v, ok := tagValue(text, askTag)
	if !ok {
		return AskBlock{}, false
	}
	return ParseAskBlock(v)
}

// ParseReportTag is [ParseAskTag] for the first <report>{json}</report>
// block, read with [ParseReportBlock].
func ParseReportTag(text string) (ReportBlock, bool) {
	v, ok := tagValue(text, reportTag)
	if !ok {
		return ReportBlock{}, false
	}
	return ParseReportBlock(v)
}

// SerializeAskTag writes b as an <ask>{json}</ask> tag: the canonical JSON
// of b (see [AskBlock.MarshalJSON]) with '<', '>' and '&' escaped as \u003c,
// \u003e and \u0026, so the tag never contains a closing tag of its own and
// [ParseAskTag], like the TypeScript reference's regular expression, reads
// back exactly what the block holds (docs/contract.md section 4). A block
// already in the parser's normal form (as [ParseAskBlock] returns it) reads
// back equal; any other block reads back as [ParseAskBlock] normalizes it.
func SerializeAskTag(b AskBlock) string {
	out := append([]byte("<"+askTag+">"), appendAsk(nil, b, true)...)
	return string(append(out, "</"+askTag+">"...))
}

// SerializeReportTag writes b as a <report>{json}</report> tag, escaped and
// round-tripping as [SerializeAskTag] describes.
func SerializeReportTag(b ReportBlock) string {
	out := append([]byte("<"+reportTag+">"), appendReport(nil, b, true)...)
	return string(append(out, "</"+reportTag+">"...))
}

// tagValue returns the JSON value of the first <name> block of text: after
// the first opening tag (ASCII case-insensitive), ECMAScript whitespace, one
// JSON value, ECMAScript whitespace, and the closing tag.
func tagValue(text, name string) (any, bool) {
	i := indexOpenTag(text, name)
	if i < 0 {
		return nil, false
	}
	v, _, ok := tagAt(text, i, name)
	return v, ok
}

// tagAt reads the <name> block whose opening tag starts at text[i]: it
// returns the block's JSON value and the offset just after its closing tag.
func tagAt(text string, i int, name string) (v any, end int, ok bool) {
	rest := jsjson.TrimLeft(text[i+len(name)+2:])
	v, n, ok := jsjson.ParsePrefix(rest)
	if !ok {
		return nil, 0, false
	}
	tail := jsjson.TrimLeft(rest[n:])
	if !hasCloseTag(tail, name) {
		return nil, 0, false
	}
	return v, len(text) - len(tail) + len(name) + 3, true
}

// indexOpenTag returns the index of the first "<name>" in s, comparing
// ASCII letters without regard to case, or -1. It finds what the
// reference's /<name>/i finds: without the u flag, ECMAScript case folding
// never maps a non-ASCII character to an ASCII one, so "ſ" (U+017F) and "K"
// (U+212A) do not match "s" and "k".
func indexOpenTag(s, name string) int {
	for i := 0; i+len(name)+2 <= len(s); i++ {
		if isOpenTag(s[i:], name) {
			return i
		}
	}
	return -1
}

// isOpenTag reports whether s starts with "<name>", ASCII letters compared
// without regard to case.
func isOpenTag(s, name string) bool {
	return len(s) >= len(name)+2 && s[0] == '<' && matchFold(s[1:], name) && s[1+len(name)] == '>'
}

// hasCloseTag reports whether s starts with "</name>", ASCII letters
// compared without regard to case.
func hasCloseTag(s, name string) bool {
	return len(s) >= len(name)+3 && s[0] == '<' && s[1] == '/' && matchFold(s[2:], name) && s[2+len(name)] == '>'
}

// matchFold reports whether s starts with name (lowercase ASCII letters),
// ignoring the case of ASCII letters only.
func matchFold(s, name string) bool {
	if len(s) < len(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != name[i] {
			return false
		}
	}
	return true
}
