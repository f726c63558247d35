package openaisdk

import (
	"context"
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/modelstep"
)

// ResponsesModel is an [agent.Model] on the Responses API of the official
// SDK (docs/contract.md section 19.3): each step sends [ResponsesParams] of
// the request with Params as base, streams the answer with
// client.Responses.NewStreaming and reads it with [ReadResponses] into the
// step's sink. When the step has reasoning, its reply's Reasoning holds
// every output item of the step (from response.output_item.done, raw JSON
// as received, in stream order): the reasoning items and the items the
// API pairs them with by id, which [ResponsesParams] passes back. Without
// reasoning the reply has none. Step returns an error only when the sink
// returned one (that error) or ctx ended; a provider's failure is the
// sink's Fail.
type ResponsesModel struct {
	// Client is the SDK's client: its base URL, key, retries.
	Client *openai.Client
	// Params holds the model and the settings of every request (with
	// store false, include reasoning.encrypted_content so that the
	// reasoning items can be passed back).
	Params responses.ResponseNewParams
	// Options are the reader's; nil means the defaults. Their
	// RequestModel defaults to Params.Model, and their OnEvent sees every
	// event too.
	Options *Options[responses.ResponseStreamEventUnion]
}

// Step streams one step of req into sink.
func (m *ResponsesModel) Step(ctx context.Context, req *agent.Request, sink ingest.Sink) (agent.Reply, error) {
	params := ResponsesParams(req, m.Params)
	opts := readerOptions(m.Options, string(params.Model))
	var out outputItems
	onEvent := opts.OnEvent
	opts.OnEvent = func(ev responses.ResponseStreamEventUnion) {
		out.event(ev)
		if onEvent != nil {
			onEvent(ev)
		}
	}
	guard := modelstep.Guard(sink)
	stream := m.Client.Responses.NewStreaming(ctx, params)
	err := ReadResponses(ctx, stream, guard, opts)
	stream.Close()
	return agent.Reply{Reasoning: out.reasoning()}, guard.Result(ctx, err)
}

// outputItems are the output items of a Responses step, as received.
type outputItems struct {
	items    []json.RawMessage
	reasoned bool // one of them is a reasoning item
}

// event keeps the item of a response.output_item.done event.
func (o *outputItems) event(ev responses.ResponseStreamEventUnion) {
	if ev.Type != "response.output_item.done" {
		return
	}
	raw := ev.Item.RawJSON()
	if raw == "" {
		return
	}
	o.items = append(o.items, json.RawMessage(raw)) // a copy: the event's memory is the SDK's
	if ev.Item.Type == "reasoning" {
		o.reasoned = true
	}
}

// reasoning is the step's Reasoning: every item when one is a reasoning
// item, else none.
func (o *outputItems) reasoning() []agent.Reasoning {
	if !o.reasoned {
		return nil
	}
	out := make([]agent.Reasoning, len(o.items))
	for i, item := range o.items {
		out[i].Item = item
	}
	return out
}
