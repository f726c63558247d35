package openaisdk

import (
	"slices"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/tidwall/gjson"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/internal/sdkmodel"
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
			for _, r := range sdkmodel.Results(req.Messages, i) {
				items = append(items, responses.ResponseInputItemUnionParam{OfFunctionCallOutput: &responses.ResponseInputItemFunctionCallOutputParam{
					CallID: openai.String(r.CallID),
					Output: responses.ResponseInputItemFunctionCallOutputOutputUnionParam{OfString: openai.String(sdkmodel.Content(r))},
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

// appendStep appends the items of assistant message m to items.
func appendStep(items responses.ResponseInputParam, m agent.Message) responses.ResponseInputParam {
	var sent []bool // the calls a kept item carries
	text := m.Text != ""
	for _, r := range m.Reasoning {
		if len(r.Item) == 0 {
			continue
		}
		if !gjson.ValidBytes(r.Item) {
			continue
		}
		switch gjson.GetBytes(r.Item, "type").Str {
		case "function_call":
			id := gjson.GetBytes(r.Item, "call_id").Str
			k := slices.IndexFunc(m.Calls, func(c agent.Call) bool { return c.ID == id })
			if k < 0 {
				continue // not a call of the step as the conversation has it
			}
			if sent == nil {
				sent = make([]bool, len(m.Calls))
			}
			sent[k] = true
		case "message":
			text = false
		}
		items = append(items, param.Override[responses.ResponseInputItemUnionParam](r.Item))
	}
	if text {
		items = append(items, responses.ResponseInputItemParamOfMessage(m.Text, responses.EasyInputMessageRoleAssistant))
	}
	for k, c := range m.Calls {
		if sent == nil || !sent[k] {
			items = append(items, responses.ResponseInputItemParamOfFunctionCall(string(sdkmodel.Input(c)), c.ID, c.Name))
		}
	}
	return items
}
