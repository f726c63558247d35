package chatprotocol

import (
	"encoding/json"
	"testing"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/stretchr/testify/assert"
)

func TestValidateCardAnswer(t *testing.T) {
	lo, hi := cards.CardBound{Number: 1}, cards.CardBound{Number: 5}
	d1, d2 := cards.CardBound{Date: "2026-01-01"}, cards.CardBound{Date: "2026-01-31"}
	card := func(p *cards.CardPresentation, allowDecline bool) cards.OpenCardSnapshot {
		return cards.OpenCardSnapshot{CorrelationID: "c", CreatedAt: 1, CardSpec: cards.CardSpec{Prompt: "q", Presentation: p, AllowDecline: allowDecline}}
	}
	opts := []cards.CardOption{{ID: "a", Label: "A"}, {ID: "b", Label: "B"}}
	radio := card(&cards.CardPresentation{Kind: cards.CardKindRadio, Options: opts}, false)
	checkbox := card(&cards.CardPresentation{Kind: cards.CardKindCheckbox, Options: opts}, true)
	text := card(&cards.CardPresentation{Kind: cards.CardKindText}, false)
	slider := card(&cards.CardPresentation{Kind: cards.CardKindSlider, Min: &lo, Max: &hi}, false)
	date := card(&cards.CardPresentation{Kind: cards.CardKindDate, Min: &d1, Max: &d2}, false)
	confirm := card(nil, false)
	submit := func(v string) cards.CardResponse {
		return cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(v)}
	}
	cases := []struct {
		name string
		card cards.OpenCardSnapshot
		r    cards.CardResponse
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
		{"decline not allowed", radio, cards.CardResponse{Action: cards.CardActionDecline, CorrelationID: "c"}, []string{"/action"}},
		{"decline allowed", checkbox, cards.CardResponse{Action: cards.CardActionDecline, CorrelationID: "c"}, nil},
		{"another card", radio, cards.CardResponse{Action: cards.CardActionCancel, CorrelationID: "other"}, []string{"/correlationId"}},
		{"submit without value", radio, cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "c"}, []string{"/value"}},
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
