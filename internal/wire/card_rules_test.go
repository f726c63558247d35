package wire

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/Papercusp/chat-protocol-go/cards"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// paths returns the codes and paths of a list of refusals, in order.
func paths(vs ...*refusal.Error) []string {
	var out []string
	for _, v := range vs {
		if v != nil {
			out = append(out, string(v.Code)+" "+v.Path)
		}
	}
	return out
}

func TestResponseViolations(t *testing.T) {
	const code refusal.Code = "some-code"
	cases := []struct {
		name string
		r    cards.CardResponse
		want []string
	}{
		{"submit", cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(` {"a":1}`)}, nil},
		{"decline", cards.CardResponse{Action: cards.CardActionDecline, CorrelationID: "c"}, nil},
		{"cancel", cards.CardResponse{Action: cards.CardActionCancel, CorrelationID: "c"}, nil},
		{"nothing", cards.CardResponse{}, []string{"some-code /correlationId", "some-code /action"}},
		{"action by case", cards.CardResponse{Action: "Submit", CorrelationID: "c"}, []string{"some-code /action"}},
		{"submit without value", cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "c"}, []string{"some-code /value"}},
		{"submit of an array", cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(`[{}]`)}, []string{"some-code /value"}},
		{"submit of whitespace", cards.CardResponse{Action: cards.CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(" \n")}, []string{"some-code /value"}},
		{"cancel of null", cards.CardResponse{Action: cards.CardActionCancel, CorrelationID: "c", Value: json.RawMessage(`null`)}, []string{"some-code /value"}},
		{"decline with a value", cards.CardResponse{Action: cards.CardActionDecline, Value: json.RawMessage(`{}`)}, []string{"some-code /correlationId", "some-code /value"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, paths(ResponseViolations(code, c.r)...))
		})
	}
}

func TestCardRules(t *testing.T) {
	const code refusal.Code = "some-code"
	strict, lenient := cards.CardSpec{Prompt: "q"}, cards.CardSpec{Prompt: "q", AllowDecline: true}
	assert.Equal(t, []string{"some-code /action"}, paths(CheckDecline(code, strict, cards.CardActionDecline)))
	assert.Nil(t, CheckDecline(code, lenient, cards.CardActionDecline))
	assert.Nil(t, CheckDecline(code, strict, cards.CardActionCancel))
	assert.Equal(t, []string{"some-code /correlationId"}, paths(CheckCorrelation(code, "c", "d")))
	assert.Nil(t, CheckCorrelation(code, "c", "c"))
	assert.Nil(t, CheckCorrelation(code, "c", ""), "an empty id is ResponseViolations' to refuse")
}
