package ingest

import "context"

// maxBlocks bounds the content blocks of one Anthropic message, so that a
// frame naming a huge index cannot make the reader allocate for it.
const maxBlocks = 1 << 12

// anthState is what an Anthropic Messages stream accumulates: its content
// blocks by index, and the stop reason of message_delta.
type anthState struct {
	blocks     []anthBlock
	stopReason string
}

// anthBlock is one content block. Only tool_use blocks keep anything: the
// tool's id and name from content_block_start, its input there, and the
// input_json_delta fragments, which are JSON only once the block stops.
type anthBlock struct {
	toolUse  bool
	id, name string
	start    []byte // the input of content_block_start
	args     []byte // the fragments, concatenated
	sent     bool
}

// anthEvent maps one Anthropic Messages stream event.
func (m *Mapper) anthEvent(ctx context.Context, data []byte) error {
	p := &m.p
	var typ, message, index, block, delta, usage, perr []byte
	if p.openFrame(data) {
		for p.more(0) {
			switch string(p.name(0)) {
			case "type":
				typ = p.value(0)
			case "message":
				message = p.value(0)
			case "index":
				index = p.value(0)
			case "content_block":
				block = p.value(0)
			case "delta":
				delta = p.value(0)
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
	switch string(p.text(typ)) {
	case "content_block_delta":
		return m.anthDelta(ctx, index, delta)
	case "content_block_start":
		return m.anthStart(ctx, index, block)
	case "content_block_stop":
		if b := m.anthBlock(index); b != nil && b.toolUse && !b.sent {
			return m.anthSend(ctx, b)
		}
	case "message_start":
		m.anthMessage(message)
	case "message_delta":
		if p.open(1, delta, '{') {
			for p.more(1) {
				if string(p.name(1)) == "stop_reason" {
					if r := p.str(p.value(1)); r != "" {
						m.anth.stopReason = r
					}
				} else {
					p.skip(1)
				}
			}
		}
		if p.open(1, usage, '{') {
			m.anthUsage(1)
			m.tokens.final = true
		}
	case "message_stop":
		return m.anthStop(ctx)
	case "error":
		var typ, code, msg string
		if p.open(1, perr, '{') {
			typ, code, msg = m.readError(1)
		}
		return m.providerFail(ctx, typ, code, msg, 0)
	}
	return nil
}

// anthMessage reads message_start's message: id, model and the first usage.
func (m *Mapper) anthMessage(message []byte) {
	p := &m.p
	if !p.open(1, message, '{') {
		return
	}
	var id, model []byte
	for p.more(1) {
		switch string(p.name(1)) {
		case "id":
			id = p.value(1)
		case "model":
			model = p.value(1)
		case "usage":
			if v := p.value(1); p.open(2, v, '{') {
				m.anthUsage(2)
			}
		default:
			p.skip(1)
		}
	}
	m.noteProvenance(model, id)
}

// anthUsage reads the usage object open at level l. A count the object
// carries replaces the one before (message_delta's are cumulative, never
// added); an absent or null one leaves it.
func (m *Mapper) anthUsage(l int) {
	p := &m.p
	for p.more(l) {
		switch string(p.name(l)) {
		case "input_tokens":
			count(&m.tokens.input, p.value(l))
		case "output_tokens":
			count(&m.tokens.output, p.value(l))
		case "cache_creation_input_tokens":
			count(&m.tokens.cacheWrite, p.value(l))
		case "cache_read_input_tokens":
			count(&m.tokens.cacheRead, p.value(l))
		default:
			p.skip(l)
		}
	}
}

// anthBlock returns the block at index, adding blocks up to it when it is
// new; nil for an index that is no block's.
func (m *Mapper) anthBlock(index []byte) *anthBlock {
	i, ok := integer(index)
	if !ok || i >= maxBlocks {
		return nil
	}
	for int64(len(m.anth.blocks)) <= i {
		m.anth.blocks = append(m.anth.blocks, anthBlock{})
	}
	return &m.anth.blocks[i]
}

// anthStart maps content_block_start: a tool_use block records its id, name
// and input; a text block's initial text is a delta and a thinking block's
// initial thinking is reasoning. Other blocks (redacted thinking, the
// provider's own server tools and their results) carry nothing for the turn.
func (m *Mapper) anthStart(ctx context.Context, index, block []byte) error {
	p := &m.p
	b := m.anthBlock(index)
	if b == nil || !p.open(1, block, '{') {
		return nil
	}
	var typ, id, name, input, text, thinking []byte
	for p.more(1) {
		switch string(p.name(1)) {
		case "type":
			typ = p.value(1)
		case "id":
			id = p.value(1)
		case "name":
			name = p.value(1)
		case "input":
			input = p.value(1)
		case "text":
			text = p.value(1)
		case "thinking":
			thinking = p.value(1)
		default:
			p.skip(1)
		}
	}
	switch string(p.text(typ)) {
	case "text":
		return m.delta(ctx, p.text(text))
	case "thinking":
		return m.reasoning(ctx, p.text(thinking))
	case "tool_use":
		*b = anthBlock{toolUse: true, id: p.str(id), name: p.str(name), start: append([]byte(nil), input...)}
	}
	return nil
}

// anthDelta maps content_block_delta: text_delta is a delta, thinking_delta
// reasoning, input_json_delta a fragment of its tool_use block's input;
// signature and citation deltas carry nothing for the turn.
func (m *Mapper) anthDelta(ctx context.Context, index, delta []byte) error {
	p := &m.p
	if !p.open(1, delta, '{') {
		return nil
	}
	var typ, text, thinking, partial []byte
	for p.more(1) {
		switch string(p.name(1)) {
		case "type":
			typ = p.value(1)
		case "text":
			text = p.value(1)
		case "thinking":
			thinking = p.value(1)
		case "partial_json":
			partial = p.value(1)
		default:
			p.skip(1)
		}
	}
	switch string(p.text(typ)) {
	case "text_delta":
		return m.delta(ctx, p.text(text))
	case "thinking_delta":
		return m.reasoning(ctx, p.text(thinking))
	case "input_json_delta":
		if b := m.anthBlock(index); b != nil && b.toolUse && !b.sent {
			b.args = append(b.args, p.text(partial)...)
		}
	}
	return nil
}

// anthSend sends a tool_use block: its fragments when there were any,
// else the input of its start.
func (m *Mapper) anthSend(ctx context.Context, b *anthBlock) error {
	b.sent = true
	args := b.args
	if len(args) == 0 {
		args = b.start
	}
	return m.toolCall(ctx, b.id, b.name, args)
}

// anthStop ends the turn at message_stop: a refusal fails it, any other
// stop reason completes it. A tool_use block that never stopped is sent
// first.
func (m *Mapper) anthStop(ctx context.Context) error {
	if m.anth.stopReason == "refusal" {
		return m.fail(ctx, CodeRefusal, "the model refused to answer (stop_reason refusal)")
	}
	for i := range m.anth.blocks {
		if b := &m.anth.blocks[i]; b.toolUse && !b.sent {
			if err := m.anthSend(ctx, b); err != nil || m.done {
				return err
			}
		}
	}
	return m.complete(ctx, m.anth.stopReason)
}
