package blocks_test

import (
	"fmt"

	"github.com/Papercusp/chat-protocol-go/blocks"
)

func ExampleParseAskTag() {
	text := "Before I go on:\n<ask>{\"question\":\"Ship it?\",\"options\":[{\"id\":\"y\",\"label\":\"Yes\"},{\"id\":\"n\"}]}</ask>"
	ask, ok := blocks.ParseAskTag(text)
	fmt.Println(ok, ask.Question)
	for _, o := range ask.Options {
		fmt.Printf("%s=%s\n", o.ID, o.Label)
	}
	// Output:
	// true Ship it?
	// y=Yes
	// n=n
}

func ExampleParseReportTag() {
	report, ok := blocks.ParseReportTag(`Status: <REPORT>{"title":"Fleet","plans":[{"slug":"rl-v2","items":[{"id":"P-1","status":"done"}]}]}</REPORT>`)
	fmt.Println(ok, report.Title, report.Plans[0].Title, report.Plans[0].Items[0].Text)
	// Output: true Fleet rl-v2 P-1
}

func ExampleParseAskBody() {
	ask, ok := blocks.ParseAskBody(`{"question":"  What now?  ","refs":["WI-1","",42,"  WI-2 "]}`)
	fmt.Printf("%v %q %q\n", ok, ask.Question, ask.Refs)
	_, ok = blocks.ParseAskBody(`{"question":"   "}`)
	fmt.Println(ok)
	// Output:
	// true "What now?" ["WI-1" "WI-2"]
	// false
}

func ExampleParseReportBody() {
	report, ok := blocks.ParseReportBody(`{"plans":[{"status":"active"},{"title":"Kept","items":[{"status":"wip"},{"text":"real item"}]}]}`)
	out, _ := report.MarshalJSON()
	fmt.Println(ok, string(out))
	// Output: true {"plans":[{"title":"Kept","items":[{"text":"real item"}]}]}
}

func ExampleParseAskBlock() {
	// A value decoded elsewhere, for example by encoding/json.
	value := map[string]any{"question": "Proceed?", "options": []any{map[string]any{"id": "go"}, "junk"}}
	ask, ok := blocks.ParseAskBlock(value)
	fmt.Println(ok, ask.Question, ask.Options)
	// Output: true Proceed? [{go go }]
}

func ExampleParseReportBlock() {
	value := map[string]any{"plans": []any{map[string]any{"title": 99, "slug": "only-slug"}}}
	report, ok := blocks.ParseReportBlock(value)
	fmt.Println(ok, report.Plans[0].Title)
	// Output: true only-slug
}

func ExampleSerializeAskTag() {
	tag := blocks.SerializeAskTag(blocks.AskBlock{Question: "What does </ask> mean?"})
	fmt.Println(tag)
	back, _ := blocks.ParseAskTag(tag)
	fmt.Println(back.Question)
	// Output:
	// <ask>{"question":"What does \u003c/ask\u003e mean?"}</ask>
	// What does </ask> mean?
}

func ExampleSerializeReportTag() {
	fmt.Println(blocks.SerializeReportTag(blocks.ReportBlock{Plans: []blocks.ReportPlan{{Title: "A & B"}}}))
	// Output: <report>{"plans":[{"title":"A \u0026 B"}]}</report>
}

func ExampleFindTags() {
	text := "Status:\n<report>{\"plans\":[{\"title\":\"Rate-limit v2\",\"items\":[{\"text\":\"Pacing\",\"status\":\"wip\"}]}]}</report>\n" +
		"<ask>{\"question\":\"Route the fleet through the gateway?\"}</ask>"
	for _, tag := range blocks.FindTags(text) {
		switch tag.Kind {
		case blocks.TagReport:
			fmt.Println("report at", tag.Start, tag.Report.Plans[0].Title)
		case blocks.TagAsk:
			fmt.Println("ask at", tag.Start, tag.Ask.Question)
		}
	}
	// Output:
	// report at 8 Rate-limit v2
	// ask at 106 Route the fleet through the gateway?
}
