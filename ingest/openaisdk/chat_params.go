package openaisdk

import (
	"encoding/json"
	"slices"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/internal/modelstep"
)

// ChatParams returns the Chat Completions request of req (docs/contract.md
// section 19.3): base with its messages replaced by the system message
// (req.System, when set) and the conversation, and the request's tools
// after base's own. A user message is a user message; an assistant
// message is an assistant message with its text as content and its calls
// as tool_calls (id, type function, function name and arguments, the
// input's JSON text, {} for none), followed by one tool message per call
// (tool_call_id, content: the output's JSON text, {"error": output} for an
// error result), as the API requires them right after the step; a call
// the conversation left without a result is answered as an error. An
// assistant message with neither text nor calls is left out, and so is
// reasoning: Chat Completions takes none back. base is not modified.
func ChatParams(req *agent.Request, base openai.ChatCompletionNewParams) openai.ChatCompletionNewParams {
	p := base
	msgs := make([]openai.ChatCompletionMessageParamUnion, 0, chatMessages(req))
	if req.System != "" {
		msgs = append(msgs, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case agent.RoleUser:
			msgs = append(msgs, openai.UserMessage(m.Text))
		case agent.RoleAssistant:
			if m.Text == "" && len(m.Calls) == 0 {
				continue
			}
			msgs = append(msgs, chatAssistant(m))
			for _, r := range modelstep.Results(req.Messages, i) {
				msgs = append(msgs, openai.ToolMessage(modelstep.Content(r), r.CallID))
			}
		}
	}
	p.Messages = msgs
	if len(req.Tools) > 0 {
		tools := slices.Grow(slices.Clip(base.Tools), len(req.Tools))
		for _, t := range req.Tools {
			tools = append(tools, openai.ChatCompletionToolUnionParam{OfFunction: &openai.ChatCompletionFunctionToolParam{
				Function: param.Override[shared.FunctionDefinitionParam](function(t, false)),
			}})
		}
		p.Tools = tools
	}
	return p
}

// chatMessages is how many messages the request of req has, at most.
func chatMessages(req *agent.Request) int {
	n := 1
	for _, m := range req.Messages {
		if m.Role != agent.RoleTool {
			n += 1 + len(m.Calls)
		}
	}
	return n
}

// chatAssistant is an assistant message of the Chat request.
func chatAssistant(m agent.Message) openai.ChatCompletionMessageParamUnion {
	a := &openai.ChatCompletionAssistantMessageParam{}
	if m.Text != "" {
		a.Content.OfString = openai.String(m.Text)
	}
	if len(m.Calls) > 0 {
		a.ToolCalls = make([]openai.ChatCompletionMessageToolCallUnionParam, len(m.Calls))
		for k, c := range m.Calls {
			a.ToolCalls[k].OfFunction = &openai.ChatCompletionMessageFunctionToolCallParam{
				ID:       c.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(modelstep.Input(c))},
			}
		}
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: a}
}

// functionJSON is a function tool as the OpenAI APIs take it: Chat's
// function definition, or a Responses tool, which has type and strict too.
type functionJSON struct {
	Type        string          `json:"type,omitempty"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      *bool           `json:"strict,omitempty"`
}

// function is the JSON of tool t, its schema as given: a Responses tool
// when responses (strict false, since the host's schema need not meet
// strict mode's rules), else a Chat function definition. A schema that is
// not JSON goes as a JSON string, which the provider refuses.
func function(t agent.ToolSpec, responses bool) json.RawMessage {
	f := functionJSON{Name: t.Name, Description: t.Description, Parameters: modelstep.Schema(t)}
	if responses {
		strict := false
		f.Type, f.Strict = "function", &strict
	}
	b, err := json.Marshal(f)
	if err != nil {
		f.Parameters, _ = json.Marshal(string(t.Schema))
		b, _ = json.Marshal(f)
	}
	return b
}
