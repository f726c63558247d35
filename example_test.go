package chatprotocol_test

import (
	"encoding/json"
	"errors"
	"fmt"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func ExampleParseChatEvent() {
	frames := []string{
		`{"type":"token","content":"Hel"}`,
		`{"type":"navigate","href":"/products/A-100"}`,
		`{"type":"cart_mutate","op":"add","sku":"A-100"}`,
		`{"TYPE":"token","content":"x"}`,
	}
	for _, f := range frames {
		switch ev := chatprotocol.ParseChatEvent([]byte(f)).(type) {
		case *chatprotocol.ChatToken:
			fmt.Println("token:", ev.Content, "replayable:", chatprotocol.IsReplayable(ev.ChatEventType()))
		case *chatprotocol.ChatNavigate:
			fmt.Println("navigate:", ev.Href, "replayable:", chatprotocol.IsReplayable(ev.ChatEventType()))
		case *chatprotocol.ChatAppEvent:
			fmt.Println("app event:", ev.Type, string(ev.Raw))
		case nil:
			fmt.Println("not a frame")
		}
	}
	// Output:
	// token: Hel replayable: true
	// navigate: /products/A-100 replayable: false
	// app event: cart_mutate {"type":"cart_mutate","op":"add","sku":"A-100"}
	// not a frame
}

func ExampleMarshalChatEvent() {
	total := int64(812)
	out, err := chatprotocol.MarshalChatEvent(&chatprotocol.ChatDone{Usage: &chatprotocol.ChatUsage{TotalTokens: &total}})
	fmt.Println(string(out), err)
	// Output: {"type":"done","usage":{"totalTokens":812}} <nil>
}

func ExampleChatEventChannel() {
	for _, t := range []string{"token", "card", "navigate", "products"} {
		c, ok := chatprotocol.ChatEventChannel(t)
		fmt.Println(t, c, ok)
	}
	// Output:
	// token event true
	// card state true
	// navigate transient true
	// products invalid false
}

func ExampleValidateCardSpec() {
	err := chatprotocol.ValidateCardSpec(chatprotocol.CardSpec{
		Prompt: "Which size?",
		Presentation: &chatprotocol.CardPresentation{Kind: chatprotocol.CardKindRadio, Options: []chatprotocol.CardOption{
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
	card := chatprotocol.OpenCardSnapshot{CorrelationID: "corr-91", CreatedAt: 1764500001000, CardSpec: chatprotocol.CardSpec{
		Prompt:       "Which size?",
		Presentation: &chatprotocol.CardPresentation{Kind: chatprotocol.CardKindRadio, Options: []chatprotocol.CardOption{{ID: "s43", Label: "EU 43"}}},
	}}
	answer := chatprotocol.CardResponse{Action: chatprotocol.CardActionSubmit, CorrelationID: "corr-91", Value: json.RawMessage(`{"optionId":"s44"}`)}
	err := chatprotocol.ValidateCardAnswer(card, answer)
	violations, _ := errors.AsType[chatprotocol.CardViolations](err)
	fmt.Println(len(violations), violations[0].Path)
	// Output: 1 /value/optionId
}
