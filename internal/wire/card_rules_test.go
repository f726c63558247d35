package wire

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

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
		r    CardResponse
		want []string
	}{
		{"submit", CardResponse{Action: CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(` {"a":1}`)}, nil},
		{"decline", CardResponse{Action: CardActionDecline, CorrelationID: "c"}, nil},
		{"cancel", CardResponse{Action: CardActionCancel, CorrelationID: "c"}, nil},
		{"nothing", CardResponse{}, []string{"some-code /correlationId", "some-code /action"}},
		{"action by case", CardResponse{Action: "Submit", CorrelationID: "c"}, []string{"some-code /action"}},
		{"submit without value", CardResponse{Action: CardActionSubmit, CorrelationID: "c"}, []string{"some-code /value"}},
		{"submit of an array", CardResponse{Action: CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(`[{}]`)}, []string{"some-code /value"}},
		{"submit of whitespace", CardResponse{Action: CardActionSubmit, CorrelationID: "c", Value: json.RawMessage(" \n")}, []string{"some-code /value"}},
		{"cancel of null", CardResponse{Action: CardActionCancel, CorrelationID: "c", Value: json.RawMessage(`null`)}, []string{"some-code /value"}},
		{"decline with a value", CardResponse{Action: CardActionDecline, Value: json.RawMessage(`{}`)}, []string{"some-code /correlationId", "some-code /value"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, paths(ResponseViolations(code, c.r)...))
		})
	}
}

func TestCardRules(t *testing.T) {
	const code refusal.Code = "some-code"
	strict, lenient := CardSpec{Prompt: "q"}, CardSpec{Prompt: "q", AllowDecline: true}
	assert.Equal(t, []string{"some-code /action"}, paths(CheckDecline(code, strict, CardActionDecline)))
	assert.Nil(t, CheckDecline(code, lenient, CardActionDecline))
	assert.Nil(t, CheckDecline(code, strict, CardActionCancel))
	assert.Equal(t, []string{"some-code /correlationId"}, paths(CheckCorrelation(code, "c", "d")))
	assert.Nil(t, CheckCorrelation(code, "c", "c"))
	assert.Nil(t, CheckCorrelation(code, "c", ""), "an empty id is ResponseViolations' to refuse")
	assert.Equal(t, []string{"some-code /timeoutMs"}, paths(CheckTimeout(code, CardSpec{TimeoutMs: -1})))
	assert.Nil(t, CheckTimeout(code, CardSpec{TimeoutMs: 0}))
}
