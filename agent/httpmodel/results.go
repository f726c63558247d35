package httpmodel

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/agent"
)

// emptyObject is the input of a call that has none, and the schema of a
// tool that names none: a JSON object with any members.
var (
	emptyObject  = json.RawMessage(`{}`)
	objectSchema = json.RawMessage(`{"type":"object"}`)
)

// input returns a call's input, {} for none.
func input(c agent.Call) json.RawMessage {
	if len(c.Input) == 0 {
		return emptyObject
	}
	return c.Input
}

// schema returns a tool's input schema, an object schema for none.
func schema(t agent.ToolSpec) json.RawMessage {
	if len(t.Schema) == 0 {
		return objectSchema
	}
	return t.Schema
}

// outputText is a result's output as the text OpenAI's APIs carry, which
// have no error flag (docs/contract.md section 19.3): an ok result's JSON
// output as it is ("" for none), an error result's as {"error":output}.
func outputText(r agent.Result) (string, error) {
	if !r.IsError {
		return string(r.Output), nil
	}
	out := r.Output
	if len(out) == 0 {
		out = json.RawMessage(`null`)
	}
	b, err := json.Marshal(struct {
		Error json.RawMessage `json:"error"`
	}{out})
	return string(b), err
}
