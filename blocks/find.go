package blocks

import "strings"

// TagKind names the kind of a tag [FindTags] found: [TagReport] or [TagAsk].
type TagKind string

// The tag kinds, which are also the tag names (docs/contract.md section 4).
const (
	TagReport TagKind = reportTag
	TagAsk    TagKind = askTag
)

// Tag is one block [FindTags] found in turn text. text[Start:End] is the
// whole tag, from the '<' of its opening tag to the '>' of its closing tag.
// Report is set when Kind is [TagReport], Ask when it is [TagAsk].
type Tag struct {
	Kind       TagKind
	Start, End int
	Report     ReportBlock
	Ask        AskBlock
}

// FindTags returns every <report> and <ask> block of text, in the order
// they appear. A turn may carry several blocks of both kinds (a status
// report, then a question), where [ParseReportTag] and [ParseAskTag], like the
// TypeScript reference, read only the first tag of their kind.
//
// Each block is read by the rules of [ParseReportTag] and [ParseAskTag]
// (docs/contract.md section 4): an opening tag in any ASCII case, one JSON
// value, the closing tag, ECMAScript whitespace between them, and the
// field rules of [ParseReportBlock] and [ParseAskBlock]. Unlike those
// functions, an opening tag that does not start a valid block is passed
// over and the search goes on after it; and the search resumes after the
// closing tag of each block found, so a tag quoted inside a block's JSON
// strings is not a block of its own. Every Tag's text[Start:End], given to
// the parser of its kind, gives its block back. FindTags never panics; it
// returns nil when text holds no block.
func FindTags(text string) []Tag {
	var out []Tag
	for i := 0; i < len(text); {
		j := strings.IndexByte(text[i:], '<')
		if j < 0 {
			break
		}
		i += j
		if tag, ok := tagFrom(text, i); ok {
			out = append(out, tag)
			i = tag.End
			continue
		}
		i++
	}
	return out
}

// tagFrom reads the block whose opening tag starts at text[i], if any.
func tagFrom(text string, i int) (Tag, bool) {
	switch {
	case isOpenTag(text[i:], reportTag):
		if v, end, ok := tagAt(text, i, reportTag); ok {
			b, ok := ParseReportBlock(v)
			return Tag{Kind: TagReport, Start: i, End: end, Report: b}, ok
		}
	case isOpenTag(text[i:], askTag):
		if v, end, ok := tagAt(text, i, askTag); ok {
			b, ok := ParseAskBlock(v)
			return Tag{Kind: TagAsk, Start: i, End: end, Ask: b}, ok
		}
	}
	return Tag{}, false
}
