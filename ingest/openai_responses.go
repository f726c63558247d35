package ingest

import "context"

// respEvent maps one Responses stream event.
func (m *Mapper) respEvent(ctx context.Context, data []byte) error {
	p := &m.p
	var v [13][]byte
	if !p.frame(data, v[:], "type", "response", "item", "item_id", "delta", "arguments", "input", "name", "refusal", "code", "message", "error", "annotation") {
		return nil // Event fails the turn
	}
	typ, response, item, itemID, delta, arguments, input, name, refusal, code, message, perr := v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11]
	switch string(p.text(typ)) {
	case "response.output_text.annotation.added":
		if p.open(1, v[12], '{') {
			var a [3][]byte
			p.members(1, a[:], "type", "url", "title")
			if p.is(a[0], "url_citation") {
				return m.source(ctx, a[1], a[2])
			}
		}
	case "response.output_text.delta":
		return m.delta(ctx, p.text(delta))
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		return m.reasoning(ctx, p.text(delta))
	case "response.refusal.delta":
		m.buffer(&m.refusal, p.text(delta), pathMessage)
	case "response.refusal.done":
		if r := p.text(refusal); len(r) > 0 {
			m.refusal = m.refusal[:0]
			m.buffer(&m.refusal, r, pathMessage)
		}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		m.fragment(m.respCall(p.str(itemID)), p.text(delta))
	case "response.function_call_arguments.done":
		c := m.respCall(p.str(itemID))
		m.setWhole(c, p.text(arguments))
		c.identify(p, nil, name)
	case "response.custom_tool_call_input.done":
		c := m.respCall(p.str(itemID))
		c.custom = true
		m.setWhole(c, p.text(input))
	case "response.output_item.added", "response.output_item.done":
		return m.respItem(ctx, item, p.is(typ, "response.output_item.done"))
	case "response.created", "response.in_progress", "response.queued":
		m.respResponse(response)
	case "response.completed", "response.incomplete", "response.failed":
		return m.respEnd(ctx, p.text(typ)[len("response."):], response)
	case "error":
		typ, c, msg := "", p.str(code), p.str(message)
		if p.open(1, perr, '{') {
			typ, c, msg = m.readError(1)
		}
		return m.providerFail(ctx, typ, c, msg, 0)
	}
	return nil
}

// respCall returns the call of output item itemID, adding it when it is new.
// Argument deltas carry the item id; the call id is on the item.
func (m *Mapper) respCall(itemID string) *toolCall {
	if c := m.calls.item(itemID); c != nil {
		return c
	}
	return m.calls.addItem(&toolCall{item: itemID})
}

// respItem maps an output item added or done: a function_call or
// custom_tool_call item maps its id to its call id, and once done the call
// is sent: its deltas when any came, else the arguments of its done events
// or its own; an item done with status incomplete (the response's token
// limit cut it) is never sent. Other items (messages, reasoning, the provider's own tools)
// carry nothing the deltas did not.
func (m *Mapper) respItem(ctx context.Context, item []byte, done bool) error {
	p := &m.p
	if !p.open(1, item, '{') {
		return nil
	}
	var v [7][]byte
	p.members(1, v[:], "type", "id", "call_id", "name", "arguments", "input", "status")
	typ, id, callID, name, arguments, input, status := v[0], v[1], v[2], v[3], v[4], v[5], v[6]
	custom := p.is(typ, "custom_tool_call")
	if !custom && !p.is(typ, "function_call") {
		return nil
	}
	c := m.respCall(p.str(id))
	c.custom = custom
	c.identify(p, callID, name)
	if !done || c.sent {
		return nil
	}
	if p.is(status, "incomplete") {
		c.drop() // the token limit cut it: its arguments are not the model's whole call
		return nil
	}
	if c.whole == nil {
		if custom {
			m.setWhole(c, p.text(input))
		} else {
			m.setWhole(c, p.text(arguments))
		}
	}
	return m.send(ctx, c)
}

// respUsage names the token counts of a Responses usage object.
var respUsage = usage{"input_tokens", "output_tokens", "total_tokens"}

// respResponse reads the response object of an event for its id, model and
// usage; for a failed or incomplete response it returns its error's code
// and message, or the reason it is incomplete.
func (m *Mapper) respResponse(response []byte) (errType, errCode, errMsg, incomplete string) {
	p := &m.p
	var reason [1][]byte
	m.response(1, response, &respUsage, true, func(name []byte) {
		switch string(name) {
		case "error":
			if p.open(2, p.value(1), '{') {
				errType, errCode, errMsg = m.readError(2)
			}
		case "incomplete_details":
			if p.open(2, p.value(1), '{') {
				p.members(2, reason[:], "reason")
				incomplete = p.str(reason[0])
			}
		default:
			p.skip(1)
		}
	})
	return
}

// respEnd ends the turn at response.completed, response.incomplete or
// response.failed (what, without its prefix). A call whose item never said
// it was done is sent at the end of a completed response only.
func (m *Mapper) respEnd(ctx context.Context, what []byte, response []byte) error {
	kind := string(what)
	errType, errCode, errMsg, incomplete := m.respResponse(response)
	if kind == "failed" {
		return m.providerFail(ctx, errType, errCode, errMsg, 0)
	}
	if kind != "completed" {
		m.calls.reset()
	}
	m.reason, m.filtered = incomplete, incomplete == "content_filter"
	return m.finish(ctx)
}
