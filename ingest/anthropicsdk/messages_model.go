package anthropicsdk

import (
	"context"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/internal/modelstep"
)

// MessagesModel is an [agent.Model] on the Messages API of the official SDK
// (docs/contract.md section 19.3): each step sends [MessagesParams] of the
// request with Params as base, streams the answer with
// client.Messages.NewStreaming and reads it with [Read] into the step's
// sink. Its reply's Reasoning holds the step's thinking blocks in stream
// order (thinking with its signature, redacted_thinking with its data),
// which [MessagesParams] passes back. Step returns an error only when the
// sink returned one (that error) or ctx ended; a provider's failure is the
// sink's Fail.
type MessagesModel struct {
	// Client is the SDK's client: its base URL, key, retries.
	Client *anthropic.Client
	// Params holds the model, max_tokens and the settings of every
	// request (thinking, tool_choice …).
	Params anthropic.MessageNewParams
	// Options are the reader's; nil means the defaults. Their
	// RequestModel defaults to Params.Model, and their OnEvent sees every
	// event too.
	Options *Options
}

// Step streams one step of req into sink.
func (m *MessagesModel) Step(ctx context.Context, req *agent.Request, sink ingest.Sink) (agent.Reply, error) {
	params := MessagesParams(req, m.Params)
	var o Options
	if m.Options != nil {
		o = *m.Options
	}
	if o.RequestModel == "" {
		o.RequestModel = string(params.Model)
	}
	var th thoughts
	onEvent := o.OnEvent
	o.OnEvent = func(ev anthropic.MessageStreamEventUnion) {
		th.event(ev)
		if onEvent != nil {
			onEvent(ev)
		}
	}
	guard := modelstep.Guard(sink)
	stream := m.Client.Messages.NewStreaming(ctx, params)
	err := Read(ctx, stream, guard, &o)
	stream.Close()
	return agent.Reply{Reasoning: th.reasoning()}, guard.Result(ctx, err)
}

// thoughts are the thinking blocks of a Messages step, as they stream.
type thoughts struct {
	blocks []*thought // pointers: a strings.Builder is not copied
}

// thought is one thinking block: its index in the message, and its
// thinking and signature so far, or its redacted data.
type thought struct {
	index           int64
	text, signature strings.Builder
	redacted        string
}

// event notes a thinking block's start or delta.
func (t *thoughts) event(ev anthropic.MessageStreamEventUnion) {
	switch ev.Type {
	case "content_block_start":
		cb := ev.ContentBlock
		switch cb.Type {
		case "thinking":
			b := &thought{index: ev.Index}
			t.blocks = append(t.blocks, b)
			b.text.WriteString(cb.Thinking)
			b.signature.WriteString(cb.Signature)
		case "redacted_thinking":
			t.blocks = append(t.blocks, &thought{index: ev.Index, redacted: strings.Clone(cb.Data)})
		}
	case "content_block_delta":
		if len(t.blocks) == 0 || t.blocks[len(t.blocks)-1].index != ev.Index {
			return
		}
		b := t.blocks[len(t.blocks)-1]
		switch ev.Delta.Type {
		case "thinking_delta":
			b.text.WriteString(ev.Delta.Thinking)
		case "signature_delta":
			b.signature.WriteString(ev.Delta.Signature)
		}
	}
}

// reasoning is the step's Reasoning.
func (t *thoughts) reasoning() []agent.Reasoning {
	if len(t.blocks) == 0 {
		return nil
	}
	out := make([]agent.Reasoning, len(t.blocks))
	for i := range t.blocks {
		b := t.blocks[i]
		if b.redacted != "" {
			out[i].Redacted = b.redacted
			continue
		}
		out[i].Text, out[i].Signature = b.text.String(), b.signature.String()
	}
	return out
}
