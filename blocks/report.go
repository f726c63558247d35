package blocks

import "github.com/Papercusp/chat-protocol-go/internal/jsjson"

// ParseReportBlock reads a decoded JSON value into a [ReportBlock], field by
// field as the TypeScript reference's parseReportBlock does (docs/contract.md
// section 4):
//
//   - v must be an object whose "plans" member is an array; anything else
//     gives no block.
//   - A plan that is not an object is skipped. Its title is its trimmed
//     "title", else its trimmed "slug"; a plan with neither is skipped.
//     "status" and "summary" are kept when they are non-blank strings.
//   - An item that is not an object is skipped. Its text is its trimmed
//     "text", else its trimmed "id"; an item with neither is skipped.
//     "status" and "ref" are kept when they are non-blank strings. A plan
//     whose "items" is not an array, or has no usable item, has nil Items.
//   - No usable plan gives no block. The block's Title is the trimmed
//     top-level "title" when it is a non-blank string.
//
// "Trimmed" is ECMAScript String.prototype.trim, and a member that is not a
// string counts as absent. v is a value as encoding/json decodes into an
// interface (map[string]any, []any, string, float64, json.Number, bool,
// nil); values of other Go types count as absent. ok is false when there is
// no block. ParseReportBlock never panics.
func ParseReportBlock(v any) (ReportBlock, bool) {
	rec, ok := object(v)
	if !ok {
		return ReportBlock{}, false
	}
	rawPlans, ok := rec["plans"].([]any)
	if !ok {
		return ReportBlock{}, false
	}
	plans := objects(rawPlans, func(p map[string]any) (ReportPlan, bool) {
		slug := str(p["slug"])
		title := or(str(p["title"]), slug)
		if title == "" {
			return ReportPlan{}, false
		}
		items, _ := p["items"].([]any)
		return ReportPlan{Slug: slug, Title: title, Status: str(p["status"]), Summary: str(p["summary"]), Items: objects(items, reportItem)}, true
	})
	if len(plans) == 0 {
		return ReportBlock{}, false
	}
	return ReportBlock{Plans: plans, Title: str(rec["title"])}, true
}

// reportItem is the item of rec, an element of a plan's "items"; false
// when it has neither text nor id.
func reportItem(rec map[string]any) (ReportItem, bool) {
	id := str(rec["id"])
	text := or(str(rec["text"]), id)
	return ReportItem{ID: id, Text: text, Status: str(rec["status"]), Ref: str(rec["ref"])}, text != ""
}

// ParseReportBody reads the JSON text of a <report> block (the text between
// the tags) as JSON.parse would, then applies [ParseReportBlock]. Text that is
// not JSON gives no block. Only JSON whitespace (space, tab, LF, CR) may
// surround the value: a byte order mark or U+00A0 makes the text invalid, as
// it does for JSON.parse.
func ParseReportBody(s string) (ReportBlock, bool) {
	v, ok := jsjson.ParseString(s)
	if !ok {
		return ReportBlock{}, false
	}
	return ParseReportBlock(v)
}
