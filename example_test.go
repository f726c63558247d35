package chatprotocol_test

import (
	"encoding/json"
	"errors"
	"fmt"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func ExampleValidateCardSpec() {
	err := chatprotocol.ValidateCardSpec(cards.CardSpec{
		Prompt: "Which size?",
		Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio, Options: []cards.CardOption{
			{ID: "s42", Label: "EU 42"}, {ID: "s42", Label: "EU 42 again", Style: "loud"},
		}},
	})
	fmt.Println(errors.Is(err, refusal.ErrInvalidCard))
	violations, _ := errors.AsType[chatprotocol.CardViolations](err)
	for _, v := range violations {
		fmt.Println(v.Code, v.Path)
	}
	// Output:
	// true
	// invalid-card /presentation/options/1/id
	// invalid-card /presentation/options/1/style
}

func ExampleValidateCardAnswer() {
	card := cards.OpenCardSnapshot{CorrelationID: "corr-91", CreatedAt: 1764500001000, CardSpec: cards.CardSpec{
		Prompt:       "Which size?",
		Presentation: &cards.CardPresentation{Kind: cards.CardKindRadio, Options: []cards.CardOption{{ID: "s43", Label: "EU 43"}}},
	}}
	answer := cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "corr-91", Value: json.RawMessage(`{"optionId":"s44"}`)}
	err := chatprotocol.ValidateCardAnswer(card, answer)
	violations, _ := errors.AsType[chatprotocol.CardViolations](err)
	fmt.Println(len(violations), violations[0].Path)
	// Output: 1 /value/optionId
}
