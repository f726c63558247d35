package blocks

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// found summarises FindTags' answer: per tag its kind and its report title
// or ask question.
func found(text string) []string {
	var out []string
	for _, tag := range FindTags(text) {
		switch tag.Kind {
		case TagReport:
			out = append(out, "report:"+tag.Report.Plans[0].Title)
		case TagAsk:
			out = append(out, "ask:"+tag.Ask.Question)
		}
	}
	return out
}

func TestFindTags(t *testing.T) {
	report := `<report>{"plans":[{"title":"P"}]}</report>`
	cases := []struct {
		name, in string
		want     []string
	}{
		{"none", "just text < with > brackets", nil},
		{"empty", "", nil},
		{"report then ask", "Status:\n" + report + "\nThen:\n<ask>{\"question\":\"Go?\"}</ask>", []string{"report:P", "ask:Go?"}},
		{"two asks", `<ask>{"question":"a"}</ask> and <ASK> {"question":"b"} </Ask>`, []string{"ask:a", "ask:b"}},
		{"a bad first tag does not hide the next", `<ask>{"question":""}</ask><ask>not json</ask><ask>{"question":"c"}</ask>`, []string{"ask:c"}},
		{"an unclosed tag does not hide the next", `<report>{"plans":[{"title":"X"}]}<report>{"plans":[{"title":"Y"}]}</report>`, []string{"report:Y"}},
		{"a tag quoted inside a block is not a block", `<report>{"plans":[{"title":"<ask>{\"question\":\"inner\"}</ask>"}]}</report>`, []string{`report:<ask>{"question":"inner"}</ask>`}},
		{"a closing tag inside a string does not end the block", `<ask>{"question":"say </ask> twice"}</ask>`, []string{"ask:say </ask> twice"}},
		{"look-alikes are not tags", "<aſk>{\"question\":\"q\"}</aſk><as\u212a>{\"question\":\"q\"}</as\u212a>", nil},
		{"a tag cut at the end", `<ask>{"question":"q"}</as`, nil},
		{"an opening tag at the very end", "text <report", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, found(c.in))
		})
	}
}

func TestFindTagsSpans(t *testing.T) {
	text := "a <report>{\"plans\":[{\"title\":\"P\"}]}</report> b <ask>\n{\"question\":\"q\"}\n</ask> c"
	tags := FindTags(text)
	require.Len(t, tags, 2)
	assert.Equal(t, `<report>{"plans":[{"title":"P"}]}</report>`, text[tags[0].Start:tags[0].End])
	assert.Equal(t, "<ask>\n{\"question\":\"q\"}\n</ask>", text[tags[1].Start:tags[1].End])
}

// checkTags fails unless FindTags' tags are ordered, disjoint and each
// reads back as its block through the tag parser of its kind.
func checkTags(t *testing.T, text string) {
	end := 0
	for _, tag := range FindTags(text) {
		if tag.Start < end || tag.End <= tag.Start || tag.End > len(text) {
			t.Fatalf("tag at [%d,%d) after %d in %q", tag.Start, tag.End, end, text)
		}
		end = tag.End
		span := text[tag.Start:tag.End]
		switch tag.Kind {
		case TagReport:
			if b, ok := ParseReportTag(span); !ok || !reflect.DeepEqual(b, tag.Report) {
				t.Fatalf("%q reads back as %+v, want %+v", span, b, tag.Report)
			}
		case TagAsk:
			if b, ok := ParseAskTag(span); !ok || !reflect.DeepEqual(b, tag.Ask) {
				t.Fatalf("%q reads back as %+v, want %+v", span, b, tag.Ask)
			}
		default:
			t.Fatalf("kind %q", tag.Kind)
		}
	}
}

func FuzzFindTags(f *testing.F) {
	for _, c := range readParity(f) {
		if strings.HasSuffix(c.Fn, "-tag") {
			f.Add(c.Input + c.Input)
		}
	}
	f.Add(`<report>{"plans":[{"title":"<ask>{\"question\":\"inner\"}</ask>"}]}</report><ask>{"question":"q"}</ask>`)
	f.Add(`<ask>{"question":"a"}</ask><ask>{"question":""}</ask><ASK>{"question":"b"}</ASK>`)
	f.Fuzz(checkTags)
}
