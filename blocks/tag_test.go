package blocks

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAskTagRules(t *testing.T) {
	cases := []struct {
		name, in string
		want     string // question, or "" for no block
	}{
		{"plain", `<ask>{"question":"q"}</ask>`, "q"},
		{"ASCII case variants", `<aSk>{"question":"q"}</AsK>`, "q"},
		{"long s is not s", `<aſk>{"question":"q"}</aſk>`, ""},
		{"Kelvin sign is not k", "<as\u212a>{\"question\":\"q\"}</as\u212a>", ""},
		{"attributes are not a tag", `<ask id="1">{"question":"q"}</ask>`, ""},
		{"space in tag", `<ask >{"question":"q"}</ask>`, ""},
		{"ECMAScript whitespace around the value", "<ask>\ufeff\u00a0\u2028{\"question\":\"q\"}\u3000\n</ask>", "q"},
		{"U+0085 is not ECMAScript whitespace", "<ask>\u0085{\"question\":\"q\"}</ask>", ""},
		{"closing tag inside a string does not cut the block", `<ask>{"question":"what does </ask> do?"}</ask>`, "what does </ask> do?"},
		{"first tag only, even when it fails", `<ask>nope</ask><ask>{"question":"q"}</ask>`, ""},
		{"trailing junk before the closing tag", `<ask>{"question":"q"} x</ask>`, ""},
		{"two values", `<ask>{"question":"q"}{"question":"r"}</ask>`, ""},
		{"no closing tag", `<ask>{"question":"q"}`, ""},
		{"nested opening tag", `<<ask>{"question":"q"}</ask>>`, "q"},
		{"closing tag of the other kind", `<ask>{"question":"q"}</report>`, ""},
		{"duplicate names, last wins", `<ask>{"question":"a","question":"b"}</ask>`, "b"},
		{"case-sensitive names", `<ask>{"Question":"a"}</ask>`, ""},
		{"number out of range is no error", `<ask>{"question":"q","x":1e400}</ask>`, "q"},
		{"invalid UTF-8 read as U+FFFD", "<ask>{\"question\":\"\xe2\x82A\"}</ask>", "\ufffdA"},
		{"lone surrogate kept", `<ask>{"question":"\ud800"}</ask>`, "\xed\xa0\x80"},
		{"deep nesting", `<ask>{"question":"q","x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}</ask>`, "q"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, ok := ParseAskTag(c.in)
			assert.Equal(t, c.want != "", ok)
			assert.Equal(t, c.want, b.Question)
		})
	}
}

func TestParseReportTagRules(t *testing.T) {
	b, ok := ParseReportTag("x <RePoRt>\t{\"plans\":[{\"slug\":\"a</report>\"}]} </report> y")
	require.True(t, ok)
	assert.Equal(t, "a</report>", b.Plans[0].Title)
	_, ok = ParseReportTag(`<report>{"plans":[{"slug":"s"}]}</ask>`)
	assert.False(t, ok)
	_, ok = ParseReportTag(`<ask>{"plans":[{"slug":"s"}]}</ask>`)
	assert.False(t, ok)
}

func TestSerializeEscapes(t *testing.T) {
	b := AskBlock{Question: "a </ask> & <b>", Options: []AskOption{{ID: "x", Label: ">"}}, Refs: []string{"&"}}
	tag := SerializeAskTag(b)
	assert.Equal(t, `<ask>{"question":"a \u003c/ask\u003e \u0026 \u003cb\u003e","options":[{"id":"x","label":"\u003e"}],"refs":["\u0026"]}</ask>`, tag)
	assert.Equal(t, 1, strings.Count(strings.ToLower(tag), "</ask>"))
	got, ok := ParseAskTag(tag)
	require.True(t, ok)
	assert.Equal(t, b, got)

	r := ReportBlock{Plans: []ReportPlan{{Slug: "s", Title: "</report>"}}, Title: "<t>"}
	rt := SerializeReportTag(r)
	assert.Equal(t, `<report>{"plans":[{"slug":"s","title":"\u003c/report\u003e"}],"title":"\u003ct\u003e"}</report>`, rt)
	gotR, ok := ParseReportTag(rt)
	require.True(t, ok)
	assert.Equal(t, r, gotR)
}
