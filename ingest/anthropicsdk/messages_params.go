package anthropicsdk

import (
	"slices"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/internal/modelstep"
)

// MessagesParams returns the Messages request of req (docs/contract.md
// section 19.3): base with req.System (when set) after its system blocks,
// its messages replaced by the conversation, and the request's tools
// (name, description, input_schema: the schema as given) after base's own.
// A user message is a text block; an assistant message is its content
// blocks: its reasoning first, exactly as received (thinking with its
// signature, redacted_thinking with its data), then its text, then a
// tool_use per call (id, name, input, {} for none). Every tool_use is
// answered in the next user message, whose content starts with one
// tool_result per call in the calls' order (tool_use_id, content: the
// output's JSON text as a text block, none for no output; is_error for an
// error result), a call left without a result answered as an error.
// Consecutive messages of one role are merged into one, tool results
// first. Empty text and an assistant message with no block are left out.
// base is not modified.
func MessagesParams(req *agent.Request, base anthropic.MessageNewParams) anthropic.MessageNewParams {
	p := base
	if req.System != "" {
		p.System = append(slices.Clip(base.System), anthropic.TextBlockParam{Text: req.System})
	}
	var b builder
	b.msgs = make([]anthropic.MessageParam, 0, len(req.Messages))
	for i, m := range req.Messages {
		switch m.Role {
		case agent.RoleUser:
			if m.Text != "" {
				b.add(false, anthropic.NewTextBlock(m.Text))
			}
		case agent.RoleAssistant:
			if blocks := assistantBlocks(m); len(blocks) > 0 {
				b.add(true, blocks...)
			}
			if results := modelstep.Results(req.Messages, i); len(results) > 0 {
				b.add(false, resultBlocks(results)...)
			}
		}
	}
	p.Messages = b.msgs
	if len(req.Tools) > 0 {
		tools := slices.Grow(slices.Clip(base.Tools), len(req.Tools))
		for _, t := range req.Tools {
			tool := &anthropic.ToolParam{Name: t.Name, InputSchema: param.Override[anthropic.ToolInputSchemaParam](modelstep.Schema(t))}
			if t.Description != "" {
				tool.Description = anthropic.String(t.Description)
			}
			tools = append(tools, anthropic.ToolUnionParam{OfTool: tool})
		}
		p.Tools = tools
	}
	return p
}

// builder makes the messages of a request, merging a message into the one
// before it when both have one role.
type builder struct {
	msgs []anthropic.MessageParam
	last int // 1 user, 2 assistant, 0 none yet
}

// add adds blocks as a message of the assistant or the user.
func (b *builder) add(assistant bool, blocks ...anthropic.ContentBlockParamUnion) {
	role := 1
	if assistant {
		role = 2
	}
	if role == b.last {
		prev := &b.msgs[len(b.msgs)-1]
		if assistant {
			prev.OfAssistant.Content = append(prev.OfAssistant.Content, blocks...)
		} else {
			prev.OfUser.Content = append(prev.OfUser.Content, blocks...)
		}
		return
	}
	b.last = role
	if assistant {
		b.msgs = append(b.msgs, anthropic.MessageParam{OfAssistant: &anthropic.AssistantMessageParam{Content: blocks}})
	} else {
		b.msgs = append(b.msgs, anthropic.MessageParam{OfUser: &anthropic.UserMessageParam{Content: blocks}})
	}
}

// assistantBlocks are the content blocks of assistant message m.
func assistantBlocks(m agent.Message) []anthropic.ContentBlockParamUnion {
	blocks := make([]anthropic.ContentBlockParamUnion, 0, len(m.Reasoning)+1+len(m.Calls))
	for _, r := range m.Reasoning {
		switch {
		case r.Redacted != "":
			blocks = append(blocks, anthropic.NewRedactedThinkingBlock(r.Redacted))
		case r.Signature != "" || r.Text != "":
			blocks = append(blocks, anthropic.NewThinkingBlock(r.Signature, r.Text))
		}
	}
	if m.Text != "" {
		blocks = append(blocks, anthropic.NewTextBlock(m.Text))
	}
	for _, c := range m.Calls {
		blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, modelstep.Input(c), c.Name))
	}
	return blocks
}

// resultBlocks are the tool_result blocks of results.
func resultBlocks(results []agent.Result) []anthropic.ContentBlockParamUnion {
	blocks := make([]anthropic.ContentBlockParamUnion, len(results))
	for k, r := range results {
		block := &anthropic.ToolResultBlockParam{ToolUseID: r.CallID}
		if len(r.Output) > 0 {
			block.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: string(r.Output)}}}
		}
		if r.IsError {
			block.IsError = anthropic.Bool(true)
		}
		blocks[k].OfToolResult = block
	}
	return blocks
}
