package chatprotocol

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestValidateCardAnswer(t *testing.T) {
	lo, hi := CardBound{Number: 1}, CardBound{Number: 5}
	d1, d2 := CardBound{Date: "2026-01-01"}, CardBound{Date: "2026-01-31"}
	card := func(p *CardPresentation, allowDecline bool) OpenCardSnapshot {
		return OpenCardSnapshot{CorrelationID: "c", CreatedAt: 1, CardSpec: CardSpec{Prompt: "q", Presentation: p, AllowDecline: allowDecline}}
	}
	opts := []CardOption{{ID: "a", Label: "A"}, {ID: "b", Label: "B"}}
	radio := card(&CardPresentation{Kind: CardKindRadio, Options: opts}, false)
	checkbox := card(&CardPresentation{Kind: CardKindCheckbox, Options: opts}, true)
	text := card(&CardPresentation{Kind: CardKindText}, false)
	slider := card(&CardPresentation{Kind: CardKindSlider, Min: &lo, Max: &hi}, false)
	date := card(&CardPresentation{Kind: CardKindDate, Min: &d1, Max: &d2}, false)
	confirm := card(nil, false)
	submit := func(v string) CardResponse {
		return CardResponse{Action: CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(v)}
	}
	cases := []struct {
		name string
		card OpenCardSnapshot
		r    CardResponse
		want []string
	}{
		{"radio ok", radio, submit(`{"optionId":"b"}`), nil},
		{"radio unknown option", radio, submit(`{"optionId":"z"}`), []string{"/value/optionId"}},
		{"radio wrong shape", radio, submit(`{"optionIds":["a"]}`), []string{"/value/optionId"}},
		{"radio duplicate names, last wins", radio, submit(`{"optionId":"z","optionId":"a"}`), nil},
		{"checkbox ok", checkbox, submit(`{"optionIds":["a","b"]}`), nil},
		{"checkbox none picked", checkbox, submit(`{"optionIds":[]}`), nil},
		{"checkbox bad entries", checkbox, submit(`{"optionIds":["a","a",3,"z"]}`), []string{"/value/optionIds/1", "/value/optionIds/2", "/value/optionIds/3"}},
		{"text ok", text, submit(`{"text":"hello"}`), nil},
		{"text wrong type", text, submit(`{"text":5}`), []string{"/value/text"}},
		{"slider ok", slider, submit(`{"value":5}`), nil},
		{"slider above max", slider, submit(`{"value":5.5}`), []string{"/value/value"}},
		{"slider infinite", slider, submit(`{"value":1e400}`), []string{"/value/value"}},
		{"date ok", date, submit(`{"date":"2026-01-15"}`), nil},
		{"date before min", date, submit(`{"date":"2025-12-31"}`), []string{"/value/date"}},
		{"date not a date", date, submit(`{"date":"soon"}`), []string{"/value/date"}},
		{"confirm takes any object", confirm, submit(`{"ok":true}`), nil},
		{"decline not allowed", radio, CardResponse{Action: CardActionDecline, CorrelationID: "c"}, []string{"/action"}},
		{"decline allowed", checkbox, CardResponse{Action: CardActionDecline, CorrelationID: "c"}, nil},
		{"another card", radio, CardResponse{Action: CardActionCancel, CorrelationID: "other"}, []string{"/correlationId"}},
		{"submit without value", radio, CardResponse{Action: CardActionSubmit, CorrelationID: "c"}, []string{"/value"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateCardAnswer(c.card, c.r)
			if c.want == nil {
				assert.NoError(t, err)
				return
			}
			assert.Equal(t, c.want, paths(t, err))
		})
	}
}
