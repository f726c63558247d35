package elicit_test

import (
	"encoding/json"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/elicit"
)

// FuzzCardOf: any elicitation request either becomes a card the root
// package's card rules accept, with an answer schema that is JSON, or is
// refused; it never panics.
func FuzzCardOf(f *testing.F) {
	for _, s := range []string{
		`{"message":"Please provide your GitHub username","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`,
		`{"message":"Pick","requestedSchema":{"type":"object","properties":{"color":{"type":"string","enum":["red","green"],"enumNames":["Red","Green"]}}}}`,
		`{"message":"How many?","requestedSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":9}}}}`,
		`{"message":"Agree?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}`,
		`{"message":"When?","requestedSchema":{"type":"object","properties":{"d":{"type":"string","format":"date"}}}}`,
		`{"message":"x","requestedSchema":{"type":"object","properties":{"a":{"type":"object"}}}}`,
		`{"message":"x","requestedSchema":{"$ref":"#/x"}}`, `{"mode":"url","url":"https://x"}`, `{}`, `[]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		c, err := elicit.CardOf(params)
		if err != nil {
			return
		}
		if verr := chatprotocol.ValidateCardSpec(c.Spec); verr != nil {
			t.Fatalf("a card the rules refuse from %q: %v", params, verr)
		}
		if !json.Valid(c.Schema) {
			t.Fatalf("an answer schema that is not JSON from %q: %s", params, c.Schema)
		}
	})
}
