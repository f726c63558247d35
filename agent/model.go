package agent

import (
	"context"
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/ingest"
)

// Model streams one model step (docs/contract.md section 19.2): it sends
// req to its provider and drives sink with the step's stream (provenance,
// deltas, tool calls, usage, and one Complete or Fail), as the readers
// of package ingest do. It returns the step's [Reasoning] to pass back
// on the next request, and an error only when sink returned one or ctx
// ended; a provider's failure is the sink's Fail. The nested modules
// ingest/openaisdk and ingest/anthropicsdk hold models built on the
// official SDKs.
type Model interface {
	Step(ctx context.Context, req *Request, sink ingest.Sink) (Reply, error)
}

// ModelFunc is a function that is a [Model].
type ModelFunc func(ctx context.Context, req *Request, sink ingest.Sink) (Reply, error)

// Step calls f.
func (f ModelFunc) Step(ctx context.Context, req *Request, sink ingest.Sink) (Reply, error) {
	return f(ctx, req, sink)
}

// Request is what a model reads for one step: the conversation so far
// (earlier turns, this turn's user message, its steps and their tool
// results, in order) and the tools it may call.
type Request struct {
	// System is the host's instructions to the model; "" for none.
	System string
	// Messages is the conversation so far, oldest first.
	Messages []Message
	// Tools are the tools the model may call, in the host's order.
	Tools []ToolSpec
}

// ToolSpec describes a tool to a model: its name, a description for the
// model, and the JSON Schema of its input (a JSON object schema; nil means
// an object with any members).
type ToolSpec struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// Reply is what a [Model] gives back of a step besides its stream.
type Reply struct {
	// Reasoning is the step's reasoning to pass back, in stream order.
	Reasoning []Reasoning
}
