package blocks

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseReportBodyRules(t *testing.T) {
	cases := []struct {
		name, in string
		want     *ReportBlock
	}{
		{"plans null", `{"plans":null}`, nil},
		{"plans object", `{"plans":{"0":{"title":"t"}}}`, nil},
		{"array plan skipped", `{"plans":[["t"],{"title":"t"}]}`, &ReportBlock{Plans: []ReportPlan{{Title: "t"}}}},
		{"slug trimmed and used as title", `{"plans":[{"slug":"\u3000s\u3000","title":"\ufeff"}]}`, &ReportBlock{Plans: []ReportPlan{{Slug: "s", Title: "s"}}}},
		{"item id fallback keeps id", `{"plans":[{"title":"t","items":[{"id":" P-1 ","text":" "}]}]}`,
			&ReportBlock{Plans: []ReportPlan{{Title: "t", Items: []ReportItem{{ID: "P-1", Text: "P-1"}}}}}},
		{"array item skipped", `{"plans":[{"title":"t","items":[["x"],{"text":"y"}]}]}`,
			&ReportBlock{Plans: []ReportPlan{{Title: "t", Items: []ReportItem{{Text: "y"}}}}}},
		{"title without plans", `{"title":"T","plans":[{}]}`, nil},
		{"title kept only as string", `{"title":["T"],"plans":[{"title":"t"}]}`, &ReportBlock{Plans: []ReportPlan{{Title: "t"}}}},
		{"duplicate plans, last wins", `{"plans":[{"title":"a"}],"plans":[]}`, nil},
		{"case-variant names ignored", `{"Plans":[{"title":"a"}]}`, nil},
		{"top-level array", `[{"plans":[{"title":"a"}]}]`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := ParseReportBody(c.in)
			require.Equal(t, c.want != nil, ok)
			if c.want != nil {
				assert.Equal(t, *c.want, got)
			}
		})
	}
}

func TestReportMarshalOrder(t *testing.T) {
	b := ReportBlock{Title: "T", Plans: []ReportPlan{
		{Slug: "s", Title: "S", Status: "active", Summary: "sum", Items: []ReportItem{{ID: "P-1", Text: "x", Status: "done", Ref: "r"}, {Text: "y"}}},
		{Title: "only"},
	}}
	out, err := b.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"plans":[{"slug":"s","title":"S","status":"active","summary":"sum","items":[{"id":"P-1","text":"x","status":"done","ref":"r"},{"text":"y"}]},{"title":"only"}],"title":"T"}`, string(out))

	empty, _ := ReportBlock{}.MarshalJSON()
	assert.Equal(t, `{"plans":[]}`, string(empty))
}
