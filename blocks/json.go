package blocks

import "github.com/Papercusp/chat-protocol-go/internal/jsjson"

// MarshalJSON writes the block in the canonical form of the TypeScript
// reference, byte for byte what JSON.stringify writes for the same block:
// members in the order plans, title (plan: slug, title, status, summary,
// items; item: id, text, status, ref), empty optional members omitted, and
// strings escaped as JSON.stringify escapes them ('<', '>', '&', U+2028 and
// U+2029 are not escaped; a lone surrogate is written as \udXXX). It never
// fails.
func (b ReportBlock) MarshalJSON() ([]byte, error) {
	return appendReport(nil, b, false), nil
}

// MarshalJSON writes the block in the canonical form of the TypeScript
// reference: members in the order question, options, refs (option: id,
// label, description), empty optional members omitted, strings as
// [ReportBlock.MarshalJSON] writes them. It never fails.
func (b AskBlock) MarshalJSON() ([]byte, error) {
	return appendAsk(nil, b, false), nil
}

// stringMember is a string member of a block's object: its key (the
// name as JSON with its colon, `"name":`), its value, and whether it is
// omitted when the value is "".
type stringMember struct {
	key, value string
	omit       omitEmpty
}

// omitEmpty is whether a string member is optional, omitted when "".
type omitEmpty bool

const (
	required omitEmpty = false
	optional omitEmpty = true
)

// members appends ms, the first members of an object, in their order with
// commas between, the empty optional ones omitted.
func members(dst []byte, html bool, ms []stringMember) []byte {
	first := true
	for i := range ms {
		m := &ms[i]
		if m.omit && m.value == "" {
			continue
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = append(dst, m.key...)
		dst = jsjson.AppendString(dst, m.value, html)
	}
	return dst
}

// AppendReport appends the canonical JSON of b to dst (see [ReportBlock.MarshalJSON]);
// html also escapes <, > and & so that the JSON can sit inside a tag.
func appendReport(dst []byte, b ReportBlock, html bool) []byte {
	dst = append(dst, `{"plans":`...)
	dst = jsjson.AppendArray(dst, b.Plans, func(dst []byte, p ReportPlan) []byte {
		dst = append(dst, '{')
		dst = members(dst, html, []stringMember{{`"slug":`, p.Slug, optional}, {`"title":`, p.Title, required}, {`"status":`, p.Status, optional}, {`"summary":`, p.Summary, optional}})
		if len(p.Items) > 0 {
			dst = append(dst, `,"items":`...)
			dst = jsjson.AppendArray(dst, p.Items, func(dst []byte, it ReportItem) []byte {
				dst = append(dst, '{')
				dst = members(dst, html, []stringMember{{`"id":`, it.ID, optional}, {`"text":`, it.Text, required}, {`"status":`, it.Status, optional}, {`"ref":`, it.Ref, optional}})
				return append(dst, '}')
			})
		}
		return append(dst, '}')
	})
	if b.Title != "" {
		dst = append(dst, `,"title":`...)
		dst = jsjson.AppendString(dst, b.Title, html)
	}
	return append(dst, '}')
}

// AppendAsk appends the canonical JSON of b to dst, as AppendReport does.
func appendAsk(dst []byte, b AskBlock, html bool) []byte {
	dst = append(dst, `{"question":`...)
	dst = jsjson.AppendString(dst, b.Question, html)
	if len(b.Options) > 0 {
		dst = append(dst, `,"options":`...)
		dst = jsjson.AppendArray(dst, b.Options, func(dst []byte, o AskOption) []byte {
			dst = append(dst, '{')
			dst = members(dst, html, []stringMember{{`"id":`, o.ID, required}, {`"label":`, o.Label, required}, {`"description":`, o.Description, optional}})
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
