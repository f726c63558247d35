package ingest

import "context"

// maxBlocks bounds the index of a content block of one Anthropic message:
// an event naming a larger index is ignored.
const maxBlocks = 1 << 12

// anthEvent maps one Anthropic Messages stream event.
func (m *Mapper) anthEvent(ctx context.Context, data []byte) error {
	p := &m.p
	var v [7][]byte
	if !p.frame(data, v[:], "type", "message", "index", "content_block", "delta", "usage", "error") {
		return nil // Event fails the turn
	}
	typ, message, index, block, delta, usage, perr := v[0], v[1], v[2], v[3], v[4], v[5], v[6]
	what := string(p.text(typ))
	if m.held != nil && what != "message_delta" && what != "ping" {
		if err := m.sendHeld(ctx, false); err != nil || m.done {
			return err
		}
	}
	switch what {
	case "content_block_delta":
		return m.anthDelta(ctx, index, delta)
	case "content_block_start":
		return m.anthStart(ctx, index, block)
	case "content_block_stop":
		if c := m.anthCall(index); c != nil && !c.sent {
			if c.truncated() {
				m.held = c // the message's stop reason says whether it was cut
				return nil
			}
			return m.send(ctx, c)
		}
	case "message_start":
		m.response(1, message, &anthUsage, false, nil) // id, model and the first usage
	case "message_delta":
		if p.open(1, delta, '{') {
			for p.more(1) {
				if string(p.name(1)) == "stop_reason" {
					if r := p.str(p.value(1)); r != "" {
						m.reason = r
					}
				} else {
					p.skip(1)
				}
			}
		}
		if p.open(1, usage, '{') {
			m.counts(1, &anthUsage)
			m.tokens.final = true
		}
		if m.held != nil {
			return m.sendHeld(ctx, m.reason == "max_tokens")
		}
	case "message_stop":
		if m.reason == "refusal" {
			m.refusal = append(m.refusal[:0], "the model refused to answer (stop_reason refusal)"...)
		}
		return m.finish(ctx)
	case "error":
		var typ, code, msg string
		if p.open(1, perr, '{') {
			typ, code, msg = m.readError(1)
		}
		return m.providerFail(ctx, typ, code, msg, 0)
	}
	return nil
}

// sendHeld decides the tool_use block held at its end because its input
// is not whole: dropped, never announced, when the provider's token limit
// cut it (cut), else sent, which fails the turn with
// [CodeInvalidToolCall] (docs/contract.md section 17.2).
func (m *Mapper) sendHeld(ctx context.Context, cut bool) error {
	c := m.held
	m.held = nil
	if cut {
		c.drop()
		return nil
	}
	return m.send(ctx, c)
}

// anthUsage names the token counts of an Anthropic usage object. A count
// the object carries replaces the one before (message_delta's are
// cumulative, never added); an absent or null one leaves it.
var anthUsage = usage{"input_tokens", "output_tokens", "", "cache_creation_input_tokens", "cache_read_input_tokens"}

// blockIndex reads the index of a content block; ok is false for one that
// is no block's.
func blockIndex(index []byte) (i int64, ok bool) {
	i, ok = integer(index)
	return i, ok && i < maxBlocks
}

// anthCall returns the tool_use block at index, nil when there is none.
func (m *Mapper) anthCall(index []byte) *toolCall {
	if i, ok := blockIndex(index); ok {
		return m.calls.at(i)
	}
	return nil
}

// anthStart maps content_block_start: a tool_use block records its id, name
// and input (replacing a block at its index), kept in index order, the order
// message_stop sends them in; a text block's initial text is a delta, a
// thinking block's initial thinking is reasoning, and a web search's
// results are sources. Other blocks (redacted thinking, the provider's own
// server tools and their other results) carry nothing for the turn.
func (m *Mapper) anthStart(ctx context.Context, index, block []byte) error {
	p := &m.p
	i, ok := blockIndex(index)
	if !ok || !p.open(1, block, '{') {
		return nil
	}
	var v [7][]byte
	p.members(1, v[:], "type", "id", "name", "input", "text", "thinking", "content")
	typ, id, name, input, text, thinking, content := v[0], v[1], v[2], v[3], v[4], v[5], v[6]
	switch string(p.text(typ)) {
	case "text":
		return m.delta(ctx, p.text(text))
	case "thinking":
		return m.reasoning(ctx, p.text(thinking))
	case "web_search_tool_result":
		return m.anthSearchResults(ctx, content)
	case "tool_use":
		c := m.calls.at(i)
		if c == nil {
			c = &toolCall{index: i}
			m.calls.insert(c)
		}
		*c = toolCall{index: i, id: p.str(id), name: p.str(name)}
		m.setWhole(c, input)
	}
	return nil
}

// anthDelta maps content_block_delta: text_delta is a delta, thinking_delta
// reasoning, input_json_delta a fragment of its tool_use block's input (an
// empty one leaves the start's input standing), a citation with a URL (a
// web search result's) a source; signature deltas carry nothing for the
// turn.
func (m *Mapper) anthDelta(ctx context.Context, index, delta []byte) error {
	p := &m.p
	if !p.open(1, delta, '{') {
		return nil
	}
	var v [5][]byte
	p.members(1, v[:], "type", "text", "thinking", "partial_json", "citation")
	typ, text, thinking, partial, citation := v[0], v[1], v[2], v[3], v[4]
	switch string(p.text(typ)) {
	case "text_delta":
		return m.delta(ctx, p.text(text))
	case "thinking_delta":
		return m.reasoning(ctx, p.text(thinking))
	case "citations_delta":
		if p.open(2, citation, '{') {
			var c [2][]byte
			p.members(2, c[:], "url", "title")
			return m.source(ctx, c[0], c[1])
		}
	case "input_json_delta":
		if c := m.anthCall(index); c != nil && !c.sent {
			if f := p.text(partial); len(f) > 0 {
				m.fragment(c, f)
			}
		}
	}
	return nil
}

// anthSearchResults sends the results of a web_search_tool_result block
// (its content, an array of web_search_result objects) as sources.
func (m *Mapper) anthSearchResults(ctx context.Context, content []byte) error {
	p := &m.p
	if !m.opts.StreamSources || !p.open(2, content, '[') {
		return nil
	}
	for p.more(2) {
		if !p.open(3, p.value(2), '{') {
			continue
		}
		var r [3][]byte
		p.members(3, r[:], "type", "url", "title")
		if !p.is(r[0], "web_search_result") {
			continue
		}
		if err := m.source(ctx, r[1], r[2]); err != nil {
			return err
		}
	}
	return nil
}
