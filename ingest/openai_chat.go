package ingest

import (
	"bytes"
	"context"
)

// chatState is what a Chat Completions stream accumulates: the tool calls of
// choice 0 in the order they appeared, its finish reason and refusal.
type chatState struct {
	calls    []chatCall
	finished bool
	reason   string
	refusal  []byte
	done     bool // [DONE] was read
}

// chatCall is one tool call being streamed, found by its index (and a new
// id at the same index starts another call).
type chatCall struct {
	index    int64
	id, name string
	args     []byte
}

// chatEvent maps one Chat Completions chunk.
func (m *Mapper) chatEvent(ctx context.Context, data []byte) error {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		m.chat.done = true
		if m.chat.finished {
			return m.chatComplete(ctx)
		}
		return m.fail(ctx, CodeStreamCut, msgCut)
	}
	p := &m.p
	var id, model, choices, usage, perr []byte
	if p.openFrame(data) {
		for p.more(0) {
			switch string(p.name(0)) {
			case "id":
				id = p.value(0)
			case "model":
				model = p.value(0)
			case "choices":
				choices = p.value(0)
			case "usage":
				usage = p.value(0)
			case "error":
				perr = p.value(0)
			default:
				p.skip(0)
			}
		}
		p.closeFrame()
	}
	if p.err != nil {
		return nil // Event fails the turn
	}
	if p.open(1, perr, '{') {
		typ, code, msg := m.readError(1)
		return m.providerFail(ctx, typ, code, msg, 0)
	}
	m.noteProvenance(model, id)
	if p.open(1, usage, '{') {
		m.tokens.final = true
		for p.more(1) {
			switch string(p.name(1)) {
			case "prompt_tokens":
				count(&m.tokens.input, p.value(1))
			case "completion_tokens":
				count(&m.tokens.output, p.value(1))
			case "total_tokens":
				count(&m.tokens.sum, p.value(1))
			default:
				p.skip(1)
			}
		}
	}
	if !p.open(1, choices, '[') {
		return nil
	}
	for p.more(1) {
		if err := m.chatChoice(ctx, p.value(1)); err != nil || m.done {
			return err
		}
	}
	return nil
}

// chatChoice maps one element of choices; only choice 0 is the turn's.
func (m *Mapper) chatChoice(ctx context.Context, choice []byte) error {
	p := &m.p
	if !p.open(2, choice, '{') {
		return nil
	}
	var index int64
	var delta, finish []byte
	for p.more(2) {
		switch string(p.name(2)) {
		case "index":
			if n, ok := integer(p.value(2)); ok {
				index = n
			} else {
				index = -1
			}
		case "delta":
			delta = p.value(2)
		case "finish_reason":
			finish = p.value(2)
		default:
			p.skip(2)
		}
	}
	if index != 0 || m.chat.finished {
		return nil
	}
	if p.open(3, delta, '{') {
		var toolCalls []byte
		for p.more(3) {
			switch string(p.name(3)) {
			case "content":
				if err := m.delta(ctx, p.text(p.value(3))); err != nil {
					return err
				}
			case "refusal":
				m.chat.refusal = append(m.chat.refusal, p.text(p.value(3))...)
			case "reasoning_content", "reasoning":
				if err := m.reasoning(ctx, p.text(p.value(3))); err != nil {
					return err
				}
			case "tool_calls":
				toolCalls = p.value(3)
			default:
				p.skip(3)
			}
		}
		if p.open(4, toolCalls, '[') {
			for p.more(4) {
				m.chatToolDelta(p.value(4))
			}
		}
	}
	if reason := p.text(finish); len(reason) > 0 {
		m.chat.finished = true
		m.chat.reason = string(reason)
		if m.chat.reason == "content_filter" || len(m.chat.refusal) > 0 {
			return nil // the end fails the turn; its calls are not the model's answer
		}
		for i := range m.chat.calls {
			c := &m.chat.calls[i]
			if err := m.toolCall(ctx, c.id, c.name, c.args); err != nil || m.done {
				return err
			}
		}
		m.chat.calls = m.chat.calls[:0]
	}
	return nil
}

// chatToolDelta adds one element of delta.tool_calls to its call: the
// call at its index, or a new one for a new index or a new id there. The
// first non-empty id and name are kept (a name repeated in every chunk is
// not concatenated); arguments are concatenated.
func (m *Mapper) chatToolDelta(tc []byte) {
	p := &m.p
	if !p.open(5, tc, '{') {
		return
	}
	var index int64
	var id, name, args []byte
	for p.more(5) {
		switch string(p.name(5)) {
		case "index":
			index, _ = integer(p.value(5))
		case "id":
			id = p.value(5)
		case "function":
			if p.open(6, p.value(5), '{') {
				for p.more(6) {
					switch string(p.name(6)) {
					case "name":
						name = p.value(6)
					case "arguments":
						args = p.value(6)
					default:
						p.skip(6)
					}
				}
			}
		default:
			p.skip(5)
		}
	}
	var c *chatCall
	for i := len(m.chat.calls) - 1; i >= 0; i-- {
		if m.chat.calls[i].index == index {
			c = &m.chat.calls[i]
			break
		}
	}
	idText := p.text(id)
	if c == nil || (len(idText) > 0 && c.id != "" && c.id != string(idText)) {
		m.chat.calls = append(m.chat.calls, chatCall{index: index})
		c = &m.chat.calls[len(m.chat.calls)-1]
	}
	if c.id == "" && len(idText) > 0 {
		c.id = string(idText)
	}
	if c.name == "" {
		if n := p.text(name); len(n) > 0 {
			c.name = string(n)
		}
	}
	c.args = append(c.args, p.text(args)...)
}

// chatComplete ends a Chat turn whose finish reason was read.
func (m *Mapper) chatComplete(ctx context.Context) error {
	switch {
	case m.chat.reason == "content_filter":
		return m.fail(ctx, CodeContentFilter, "the provider's content filter stopped the answer")
	case len(m.chat.refusal) > 0:
		return m.fail(ctx, CodeRefusal, string(m.chat.refusal))
	}
	return m.complete(ctx, m.chat.reason)
}
