package blocks

import (
	"fmt"
	"strings"
	"testing"
)

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

// BenchmarkFindTagsHostile runs FindTags over text made of opening tags
// none of which starts a block, at two sizes: every tag is tried, and each
// try must stop where its JSON stops, so ns/op grows with the text, not
// with its square (the two sizes' MB/s stay close).
func BenchmarkFindTagsHostile(b *testing.B) {
	for name, unit := range map[string]string{"array": `<ask>[`, "report": `<report>{"plans":[1 `, "strings": `<ask>["x",`} {
		for _, n := range []int{1_000, 16_000} {
			text := strings.Repeat(unit, n)
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					if tags := FindTags(text); tags != nil {
						b.Fatal("found a tag")
					}
				}
			})
		}
	}
}
