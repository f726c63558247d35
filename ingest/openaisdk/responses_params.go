package openaisdk

import (
	"encoding/json"
	"slices"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/internal/modelstep"
)

// ResponsesParams returns the Responses request of req (docs/contract.md
// section 19.3): base with instructions req.System (when set), input the
// conversation's items, and the request's tools (function tools, strict
// false) after base's own. A user message is a user message item; an
// assistant message is its step's output items: those kept in its
// Reasoning (a step with reasoning keeps them all, see [ResponsesModel]),
// exactly as received, so that each reasoning item comes before the items
// the API pairs it with; else, and for what they leave out, an assistant
// message item of its text and a function_call item per call (call_id,
// name, arguments: the input's JSON text). One function_call_output item
// (call_id, output: the output's JSON text, {"error": output} for an error
// result) per call follows the step, a call left without a result
// answered as an error. base is not modified.
func ResponsesParams(req *agent.Request, base responses.ResponseNewParams) responses.ResponseNewParams {
	p := base
	if req.System != "" {
		p.Instructions = openai.String(req.System)
	}
	items := make(responses.ResponseInputParam, 0, inputItems(req))
	for i, m := range req.Messages {
		switch m.Role {
		case agent.RoleUser:
			items = append(items, responses.ResponseInputItemParamOfMessage(m.Text, responses.EasyInputMessageRoleUser))
		case agent.RoleAssistant:
			items = appendStep(items, m)
			for _, r := range modelstep.Results(req.Messages, i) {
				items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
					CallID: openai.String(r.CallID),
					Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(modelstep.Content(r))},
				}})
			}
		}
	}
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	if len(req.Tools) > 0 {
		tools := slices.Grow(slices.Clip(base.Tools), len(req.Tools))
		for _, t := range req.Tools {
			tools = append(tools, responses.ToolUnionParam{OfFunction: new(param.Override[responses.FunctionToolParam](function(t, true)))})
		}
		p.Tools = tools
	}
	return p
}

// inputItems is how many input items the request of req has, at most.
func inputItems(req *agent.Request) int {
	n := 0
	for _, m := range req.Messages {
		switch m.Role {
		case agent.RoleUser:
			n++
		case agent.RoleAssistant:
			n += 1 + len(m.Reasoning) + 2*len(m.Calls)
		}
	}
	return n
}

// appendStep appends the items of assistant message m to items
// (modelstep.Items).
func appendStep(items responses.ResponseInputParam, m agent.Message) responses.ResponseInputParam {
	modelstep.Items(&m, func(item json.RawMessage) {
		items = append(items, param.Override[responses.ResponseInputItemUnionParam](item))
	}, func(text string) {
		items = append(items, responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleAssistant))
	}, func(c agent.Call) {
		items = append(items, responses.ResponseInputItemParamOfFunctionCall(string(modelstep.Input(c)), c.ID, c.Name))
	})
	return items
}
