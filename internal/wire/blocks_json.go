package wire

import "github.com/Papercusp/chat-protocol-go/internal/jsjson"

// MarshalJSON writes the block in the canonical form of the TypeScript
// reference, byte for byte what JSON.stringify writes for the same block:
// members in the order plans, title (plan: slug, title, status, summary,
// items; item: id, text, status, ref), empty optional members omitted, and
// strings escaped as JSON.stringify escapes them ('<', '>', '&', U+2028 and
// U+2029 are not escaped; a lone surrogate is written as \udXXX). It never
// fails.
func (b ReportBlock) MarshalJSON() ([]byte, error) {
	return AppendReport(nil, b, false), nil
}

// MarshalJSON writes the block in the canonical form of the TypeScript
// reference: members in the order question, options, refs (option: id,
// label, description), empty optional members omitted, strings as
// ReportBlock.MarshalJSON writes them. It never fails.
func (b AskBlock) MarshalJSON() ([]byte, error) {
	return AppendAsk(nil, b, false), nil
}

// member appends `,"name":"value"` (without the comma when first), or
// nothing when value is "" and optional.
func member(dst []byte, first bool, name, value string, optional, html bool) []byte {
	if optional && value == "" {
		return dst
	}
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return jsjson.AppendString(dst, value, html)
}

// AppendReport appends the canonical JSON of b to dst (see ReportBlock.MarshalJSON);
// html also escapes <, > and & so that the JSON can sit inside a tag.
func AppendReport(dst []byte, b ReportBlock, html bool) []byte {
	dst = append(dst, `{"plans":`...)
	dst = jsjson.AppendArray(dst, b.Plans, func(dst []byte, p ReportPlan) []byte {
		dst = append(dst, '{')
		dst = member(dst, true, "slug", p.Slug, true, html)
		dst = member(dst, p.Slug == "", "title", p.Title, false, html)
		dst = member(dst, false, "status", p.Status, true, html)
		dst = member(dst, false, "summary", p.Summary, true, html)
		if len(p.Items) > 0 {
			dst = append(dst, `,"items":`...)
			dst = jsjson.AppendArray(dst, p.Items, func(dst []byte, it ReportItem) []byte {
				dst = append(dst, '{')
				dst = member(dst, true, "id", it.ID, true, html)
				dst = member(dst, it.ID == "", "text", it.Text, false, html)
				dst = member(dst, false, "status", it.Status, true, html)
				dst = member(dst, false, "ref", it.Ref, true, html)
				return append(dst, '}')
			})
		}
		return append(dst, '}')
	})
	dst = member(dst, false, "title", b.Title, true, html)
	return append(dst, '}')
}

// AppendAsk appends the canonical JSON of b to dst, as AppendReport does.
func AppendAsk(dst []byte, b AskBlock, html bool) []byte {
	dst = append(dst, '{')
	dst = member(dst, true, "question", b.Question, false, html)
	if len(b.Options) > 0 {
		dst = append(dst, `,"options":`...)
		dst = jsjson.AppendArray(dst, b.Options, func(dst []byte, o AskOption) []byte {
			dst = append(dst, '{')
			dst = member(dst, true, "id", o.ID, false, html)
			dst = member(dst, false, "label", o.Label, false, html)
			dst = member(dst, false, "description", o.Description, true, html)
			return append(dst, '}')
		})
	}
	if len(b.Refs) > 0 {
		dst = append(dst, `,"refs":`...)
		dst = jsjson.AppendArray(dst, b.Refs, func(dst []byte, r string) []byte {
			return jsjson.AppendString(dst, r, html)
		})
	}
	return append(dst, '}')
}
