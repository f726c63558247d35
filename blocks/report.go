package blocks

import "github.com/Papercusp/chat-protocol-go/internal/jsjson"

// ParseReportBlock reads a decoded JSON value into a ReportBlock, field by
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
	var plans []ReportPlan
	for _, p := range rawPlans {
		prec, ok := object(p)
		if !ok {
			continue
		}
		slug := str(prec["slug"])
		title := or(str(prec["title"]), slug)
		if title == "" {
			continue
		}
		plans = append(plans, ReportPlan{
			Slug:    slug,
			Title:   title,
			Status:  str(prec["status"]),
			Summary: str(prec["summary"]),
			Items:   parseReportItems(prec["items"]),
		})
	}
	if len(plans) == 0 {
		return ReportBlock{}, false
	}
	return ReportBlock{Plans: plans, Title: str(rec["title"])}, true
}

func parseReportItems(v any) []ReportItem {
	raw, _ := v.([]any)
	var items []ReportItem
	for _, it := range raw {
		irec, ok := object(it)
		if !ok {
			continue
		}
		id := str(irec["id"])
		text := or(str(irec["text"]), id)
		if text == "" {
			continue
		}
		items = append(items, ReportItem{ID: id, Text: text, Status: str(irec["status"]), Ref: str(irec["ref"])})
	}
	return items
}

// ParseReportBody reads the JSON text of a <report> block (the text between
// the tags) as JSON.parse would, then applies ParseReportBlock. Text that is
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
