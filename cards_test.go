package chatprotocol

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/blocks"
)

// paths returns the JSON pointers of err's violations, requiring err to be
// a CardViolations of code invalid-card.
func paths(t *testing.T, err error) []string {
	t.Helper()
	require.ErrorIs(t, err, refusal.ErrInvalidCard)
	vs, ok := errors.AsType[CardViolations](err)
	require.True(t, ok)
	var out []string
	for _, v := range vs {
		assert.Equal(t, refusal.CodeInvalidCard, v.Code)
		out = append(out, v.Path)
	}
	return out
}

func radioSpec() cards.CardSpec {
	return cards.CardSpec{
		Prompt: "Which size?",
		Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio, Options: []cards.CardOption{
			{ID: "s42", Label: "EU 42"}, {ID: "s43", Label: "EU 43", Style: cards.CardOptionStylePrimary},
		}},
	}
}

func TestValidateCardSpecValid(t *testing.T) {
	lo, hi := cards.CardBound{Number: 0}, cards.CardBound{Number: 10}
	d1, d2 := cards.CardBound{Date: "2026-01-01"}, cards.CardBound{Date: "2026-12-31T00:00:00Z"}
	for _, spec := range []cards.CardSpec{
		{Prompt: "Proceed?"},
		radioSpec(),
		{Prompt: "Notes", Presentation: &cards.CardPresentation{Kind: cards.CardKindText, Multiline: true}},
		{Prompt: "How much?", Presentation: &cards.CardPresentation{Kind: cards.CardKindSlider, Min: &lo, Max: &hi, Step: 0.5}},
		{Prompt: "When?", Presentation: &cards.CardPresentation{Kind: cards.CardKindDate, Min: &d1, Max: &d2}},
		{Prompt: "Status", Report: &blocks.ReportBlock{Plans: []blocks.ReportPlan{{Title: "p", Items: []blocks.ReportItem{{Text: "x"}}}}}},
	} {
		assert.NoError(t, ValidateCardSpec(spec), spec.Prompt)
	}
}

func TestValidateCardSpecReportsEveryViolation(t *testing.T) {
	lo, hi := cards.CardBound{Number: 10}, cards.CardBound{Date: "2026-01-01"}
	cases := []struct {
		name string
		spec cards.CardSpec
		want []string
	}{
		{"radio without options", cards.CardSpec{Prompt: "q", Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio}},
			[]string{"/presentation/options"}},
		{"checkbox and select need options too", cards.CardSpec{Prompt: "q", Presentation: &cards.CardPresentation{Kind: cards.CardKindSelect, Options: []cards.CardOption{}}},
			[]string{"/presentation/options"}},
		{"repeated id, bad style, missing label", cards.CardSpec{Prompt: "q", Presentation: &cards.CardPresentation{Kind: cards.CardKindCheckbox, Options: []cards.CardOption{
			{ID: "a", Label: "A"}, {ID: "a", Label: "A again", Style: "loud"}, {ID: "b"},
		}}}, []string{"/presentation/options/1/id", "/presentation/options/1/style", "/presentation/options/2/label"}},
		{"everything at once", cards.CardSpec{TimeoutMs: -1, Presentation: &cards.CardPresentation{Kind: "dropdown", Step: -1}},
			[]string{"/presentation/kind", "/presentation/step", "/prompt", "/timeoutMs"}},
		{"slider bounds", cards.CardSpec{Prompt: "q", Presentation: &cards.CardPresentation{Kind: cards.CardKindSlider, Min: &lo, Max: &hi}},
			[]string{"/presentation/max"}},
		{"date bounds", cards.CardSpec{Prompt: "q", Presentation: &cards.CardPresentation{Kind: cards.CardKindDate, Min: &lo, Max: &cards.CardBound{Date: "tomorrow"}}},
			[]string{"/presentation/max", "/presentation/min"}},
		{"report", cards.CardSpec{Prompt: "q", Report: &blocks.ReportBlock{Plans: []blocks.ReportPlan{{Items: []blocks.ReportItem{{ID: "P-1"}}}}}},
			[]string{"/report/plans/0/items/0/text", "/report/plans/0/title"}},
		{"empty report", cards.CardSpec{Prompt: "q", Report: &blocks.ReportBlock{}}, []string{"/report/plans"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, paths(t, ValidateCardSpec(c.spec)))
		})
	}
}

func TestValidateDateBoundsOrder(t *testing.T) {
	spec := cards.CardSpec{Prompt: "q", Presentation: &cards.CardPresentation{Kind: cards.CardKindDate,
		Min: &cards.CardBound{Date: "2026-02-01"}, Max: &cards.CardBound{Date: "2026-01-01"}}}
	assert.Equal(t, []string{"/presentation/max"}, paths(t, ValidateCardSpec(spec)))
}

func TestValidateOpenCardSnapshot(t *testing.T) {
	ok := cards.OpenCardSnapshot{CorrelationID: "c", CreatedAt: 1764500001000, CardSpec: radioSpec(), DataSchemaJSON: `{"type":"object"}`}
	require.NoError(t, ValidateOpenCardSnapshot(ok))

	bad := cards.OpenCardSnapshot{DataSchemaJSON: `[1]`, CardSpec: cards.CardSpec{Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio}}}
	assert.Equal(t, []string{"/correlationId", "/createdAt", "/dataSchemaJson", "/presentation/options", "/prompt"},
		paths(t, ValidateOpenCardSnapshot(bad)))
}

func TestValidateCardResponse(t *testing.T) {
	valid := []cards.CardResponse{
		{Action: cards.CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(`{"optionId":"a"}`)},
		{Action: cards.CardActionDecline, CorrelationID: "c"},
		{Action: cards.CardActionCancel, CorrelationID: "c"},
	}
	for _, r := range valid {
		assert.NoError(t, ValidateCardResponse(r), r.Action)
	}
	cases := []struct {
		r    cards.CardResponse
		want []string
	}{
		{cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "c"}, []string{"/value"}},
		{cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(`"a"`)}, []string{"/value"}},
		{cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(`{"a":`)}, []string{"/value"}},
		{cards.CardResponse{Action: cards.CardActionDecline, CorrelationID: "c", Value: json.RawMessage(`{}`)}, []string{"/value"}},
		{cards.CardResponse{Action: "skip"}, []string{"/action", "/correlationId"}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, paths(t, ValidateCardResponse(c.r)), "%+v", c.r)
	}
}

func TestCardViolationsError(t *testing.T) {
	err := ValidateCardSpec(cards.CardSpec{})
	require.Error(t, err)
	first, ok := errors.AsType[*refusal.Error](err)
	require.True(t, ok)
	assert.Equal(t, "/prompt", first.Path)
	assert.Equal(t, refusal.CodeInvalidCard, refusal.CodeOf(err))
	assert.NotEmpty(t, err.Error())
}

func TestValidateConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				assert.Equal(t, []string{"/presentation/options"}, paths(t, ValidateCardSpec(cards.CardSpec{Prompt: "q", Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio}})))
			}
		})
	}
	wg.Wait()
}
