package blocks

import "github.com/Papercusp/chat-protocol-go/internal/jsjson"

// ParseAskBlock reads a decoded JSON value into an [AskBlock], field by field
// as the TypeScript reference's parseAskBlock does (docs/contract.md section
// 4):
//
//   - v must be an object whose trimmed "question" is a non-blank string;
//     anything else gives no block.
//   - When "options" is an array, each element that is an object with a
//     non-blank string "id" becomes an option: id trimmed, label the trimmed
//     "label" or else the id, description the trimmed "description" when
//     non-blank. Other elements are skipped. No usable option gives nil
//     Options.
//   - When "refs" is an array, its non-blank string elements, trimmed, are
//     the refs; other elements are dropped. None gives nil Refs.
//
// "Trimmed" is ECMAScript String.prototype.trim. v is a value as
// encoding/json decodes into an interface; see [ParseReportBlock]. ok is false
// when there is no block. ParseAskBlock never panics.
func ParseAskBlock(v any) (AskBlock, bool) {
	rec, ok := object(v)
	if !ok {
		return AskBlock{}, false
	}
	question := str(rec["question"])
	if question == "" {
		return AskBlock{}, false
	}
	b := AskBlock{Question: question}
	options, _ := rec["options"].([]any)
	b.Options = objects(options, func(o map[string]any) (AskOption, bool) {
		id := str(o["id"])
		return AskOption{ID: id, Label: or(str(o["label"]), id), Description: str(o["description"])}, id != ""
	})
	if raw, ok := rec["refs"].([]any); ok {
		for _, r := range raw {
			if s := str(r); s != "" {
				b.Refs = append(b.Refs, s)
			}
		}
	}
	return b, true
}

// ParseAskBody reads the JSON text of an <ask> block (the text between the
// tags) as JSON.parse would, then applies [ParseAskBlock]. Text that is not
// JSON gives no block; see [ParseReportBody] for the whitespace rule.
func ParseAskBody(s string) (AskBlock, bool) {
	v, ok := jsjson.ParseString(s)
	if !ok {
		return AskBlock{}, false
	}
	return ParseAskBlock(v)
}
