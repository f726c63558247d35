package ingest

import (
	"bytes"
	"context"
)

// chatUsage names the token counts of a Chat Completions usage object.
var chatUsage = usage{"prompt_tokens", "completion_tokens", "total_tokens"}

// chatEvent maps one Chat Completions chunk.
func (m *Mapper) chatEvent(ctx context.Context, data []byte) error {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		if m.finished {
			return m.finish(ctx)
		}
		return m.fail(ctx, CodeStreamCut, msgCut)
	}
	p := &m.p
	var v [5][]byte
	if !p.frame(data, v[:], "id", "model", "choices", "usage", "error") {
		return nil // Event fails the turn
	}
	id, model, choices, usage, perr := v[0], v[1], v[2], v[3], v[4]
	if p.open(1, perr, '{') {
		typ, code, msg := m.readError(1)
		return m.providerFail(ctx, typ, code, msg, 0)
	}
	m.noteProvenance(model, id)
	if p.open(1, usage, '{') {
		m.tokens.final = true
		m.counts(1, &chatUsage)
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
	var v [3][]byte
	p.members(2, v[:], "index", "delta", "finish_reason")
	index, delta, finish := v[0], v[1], v[2]
	if n, ok := integer(index); m.finished || index != nil && (!ok || n != 0) {
		return nil // not choice 0 (an absent index is 0's), or after its end
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
				m.buffer(&m.refusal, p.text(p.value(3)), pathMessage)
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
		m.finished = true
		m.reason = string(reason)
		m.filtered = m.reason == "content_filter"
		if m.filtered || len(m.refusal) > 0 {
			return nil // the end fails the turn; its calls are not the model's answer
		}
		if c := m.calls.last(); m.reason == "length" && c != nil && !c.sent && c.truncated() {
			c.drop() // the token limit cut the call the model was writing
		}
		return m.sendCalls(ctx)
	}
	return nil
}

// chatToolDelta adds one element of delta.tool_calls to its call: the
// call at its index, or a new one for a new index or a new id there. The
// first non-empty id and name are kept; arguments are concatenated.
func (m *Mapper) chatToolDelta(tc []byte) {
	p := &m.p
	if !p.open(5, tc, '{') {
		return
	}
	var index, id []byte
	var fn [2][]byte // its function's name and arguments
	for p.more(5) {
		switch string(p.name(5)) {
		case "index":
			index = p.value(5)
		case "id":
			id = p.value(5)
		case "function":
			if p.open(6, p.value(5), '{') {
				p.members(6, fn[:], "name", "arguments")
			}
		default:
			p.skip(5)
		}
	}
	i, _ := integer(index)
	c := m.calls.at(i)
	if idText := p.text(id); c == nil || (len(idText) > 0 && c.id != "" && c.id != string(idText)) {
		c = m.calls.add(&toolCall{index: i})
	}
	c.identify(p, id, fn[0])
	m.fragment(c, p.text(fn[1]))
}
