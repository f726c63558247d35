package blocks

import "testing"

func BenchmarkParseAskTag(b *testing.B) {
	text := "Before text, a paragraph or two of prose from the model.\n" +
		`<ask>{"question":"Which account should the fleet route through?","options":[{"id":"default","label":"Default system account"},{"id":"auto","label":"Gateway auto-routing","description":"fails over across the pool"}],"refs":["WI-5235"]}</ask>` +
		"\nAfter text."
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, ok := ParseAskTag(text); !ok {
			b.Fatal("no block")
		}
	}
}

func BenchmarkSerializeAskTag(b *testing.B) {
	block := AskBlock{Question: "Use a <tag> & a </ask>?", Options: []AskOption{{ID: "y", Label: "Yes"}, {ID: "n", Label: "No"}}, Refs: []string{"WI-1"}}
	b.ReportAllocs()
	for b.Loop() {
		_ = SerializeAskTag(block)
	}
}
