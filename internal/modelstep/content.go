package modelstep

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/agent"
)

// Output returns the text a result's output is sent as: its JSON text,
// "null" for none.
func Output(r agent.Result) string {
	if len(r.Output) == 0 {
		return "null"
	}
	return string(r.Output)
}

// Content returns the text a result is sent as where the provider has no
// error flag (OpenAI): [Output], or for an error result {"error": output},
// so that the content says the tool failed.
func Content(r agent.Result) string {
	if !r.IsError {
		return Output(r)
	}
	return `{"error":` + Output(r) + `}`
}

// anyObject is the schema of a tool without one: an object with any members.
var anyObject = json.RawMessage(`{"type":"object","properties":{}}`)

// Schema returns the JSON Schema of a tool's input: its own, or an object
// with any members when it has none.
func Schema(t agent.ToolSpec) json.RawMessage {
	if len(t.Schema) == 0 {
		return anyObject
	}
	return t.Schema
}

// emptyObject is the input of a call without arguments.
var emptyObject = json.RawMessage(`{}`)

// Input returns a call's JSON input as sent back: its own, or {} when the
// model sent none.
func Input(c agent.Call) json.RawMessage {
	if len(c.Input) == 0 {
		return emptyObject
	}
	return c.Input
}
