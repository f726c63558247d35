package ingest

import (
	"context"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// respState is what a Responses stream accumulates: its tool calls by item
// id, in the order they appeared, and the refusal.
type respState struct {
	calls   []respCall
	refusal []byte
}

// respCall is one function_call (or custom_tool_call) output item.
// Argument deltas carry the item id; the call id is on the item.
type respCall struct {
	itemID, callID, name string
	args                 []byte // the deltas, concatenated
	deltas               bool   // any delta came
	final                []byte // the arguments (or input) of a done event
	custom               bool   // a custom tool's input is text, sent as a JSON string
	sent                 bool
}

// respEvent maps one Responses stream event.
func (m *Mapper) respEvent(ctx context.Context, data []byte) error {
	p := &m.p
	var typ, response, item, itemID, delta, arguments, input, name, refusal, perr []byte
	var code, message []byte
	if p.openFrame(data) {
		for p.more(0) {
			switch string(p.name(0)) {
			case "type":
				typ = p.value(0)
			case "response":
				response = p.value(0)
			case "item":
				item = p.value(0)
			case "item_id":
				itemID = p.value(0)
			case "delta":
				delta = p.value(0)
			case "arguments":
				arguments = p.value(0)
			case "input":
				input = p.value(0)
			case "name":
				name = p.value(0)
			case "refusal":
				refusal = p.value(0)
			case "code":
				code = p.value(0)
			case "message":
				message = p.value(0)
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
	case "response.output_text.delta":
		return m.delta(ctx, p.text(delta))
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		return m.reasoning(ctx, p.text(delta))
	case "response.refusal.delta":
		m.resp.refusal = append(m.resp.refusal, p.text(delta)...)
	case "response.refusal.done":
		if r := p.text(refusal); len(r) > 0 {
			m.resp.refusal = append(m.resp.refusal[:0], r...)
		}
	case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
		c := m.respCall(p.str(itemID))
		c.deltas = true
		c.args = append(c.args, p.text(delta)...)
	case "response.function_call_arguments.done":
		c := m.respCall(p.str(itemID))
		c.final = append(c.final[:0], p.text(arguments)...)
		if c.name == "" {
			c.name = p.str(name)
		}
	case "response.custom_tool_call_input.done":
		c := m.respCall(p.str(itemID))
		c.custom = true
		c.final = append(c.final[:0], p.text(input)...)
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

// respCall returns the call of item id, adding it when it is new.
func (m *Mapper) respCall(itemID string) *respCall {
	for i := range m.resp.calls {
		if m.resp.calls[i].itemID == itemID {
			return &m.resp.calls[i]
		}
	}
	m.resp.calls = append(m.resp.calls, respCall{itemID: itemID})
	return &m.resp.calls[len(m.resp.calls)-1]
}

// respItem maps an output item added or done: a function_call or
// custom_tool_call item maps its id to its call id, and once done the call
// is sent. Other items (messages, reasoning, the provider's own tools) carry
// nothing the deltas did not.
func (m *Mapper) respItem(ctx context.Context, item []byte, done bool) error {
	p := &m.p
	if !p.open(1, item, '{') {
		return nil
	}
	var typ, id, callID, name, arguments, input []byte
	for p.more(1) {
		switch string(p.name(1)) {
		case "type":
			typ = p.value(1)
		case "id":
			id = p.value(1)
		case "call_id":
			callID = p.value(1)
		case "name":
			name = p.value(1)
		case "arguments":
			arguments = p.value(1)
		case "input":
			input = p.value(1)
		default:
			p.skip(1)
		}
	}
	custom := p.is(typ, "custom_tool_call")
	if !custom && !p.is(typ, "function_call") {
		return nil
	}
	c := m.respCall(p.str(id))
	c.custom = custom
	if c.callID == "" {
		c.callID = p.str(callID)
	}
	if c.name == "" {
		c.name = p.str(name)
	}
	if !done || c.sent {
		return nil
	}
	if c.final == nil {
		if custom {
			c.final = append(c.final, p.text(input)...)
		} else {
			c.final = append(c.final, p.text(arguments)...)
		}
	}
	return m.respSend(ctx, c)
}

// respSend sends one call: its deltas when any came, else the arguments of
// its done events.
func (m *Mapper) respSend(ctx context.Context, c *respCall) error {
	c.sent = true
	args := c.final
	if c.deltas {
		args = c.args
	}
	if c.custom {
		q, err := jsontext.AppendQuote(nil, args)
		if err != nil {
			q, _ = jsontext.AppendQuote(nil, strings.ToValidUTF8(string(args), "\uFFFD"))
		}
		args = q
	}
	return m.toolCall(ctx, c.callID, c.name, args)
}

// respResponse reads the response object of an event for its id, model and
// usage; for a failed or incomplete response it returns its error's code
// and message, or the reason it is incomplete.
func (m *Mapper) respResponse(response []byte) (errType, errCode, errMsg, incomplete string) {
	p := &m.p
	if !p.open(1, response, '{') {
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
			if p.open(2, p.value(1), '{') {
				m.tokens.final = true
				for p.more(2) {
					switch string(p.name(2)) {
					case "input_tokens":
						count(&m.tokens.input, p.value(2))
					case "output_tokens":
						count(&m.tokens.output, p.value(2))
					case "total_tokens":
						count(&m.tokens.sum, p.value(2))
					default:
						p.skip(2)
					}
				}
			}
		case "error":
			if p.open(2, p.value(1), '{') {
				errType, errCode, errMsg = m.readError(2)
			}
		case "incomplete_details":
			if p.open(2, p.value(1), '{') {
				for p.more(2) {
					if string(p.name(2)) == "reason" {
						incomplete = p.str(p.value(2))
					} else {
						p.skip(2)
					}
				}
			}
		default:
			p.skip(1)
		}
	}
	m.noteProvenance(model, id)
	return
}

// respEnd ends the turn at response.completed, response.incomplete or
// response.failed (what, without its prefix).
func (m *Mapper) respEnd(ctx context.Context, what []byte, response []byte) error {
	kind := string(what)
	errType, errCode, errMsg, incomplete := m.respResponse(response)
	switch {
	case kind == "failed":
		return m.providerFail(ctx, errType, errCode, errMsg, 0)
	case incomplete == "content_filter":
		return m.fail(ctx, CodeContentFilter, "the provider's content filter stopped the answer")
	case len(m.resp.refusal) > 0:
		return m.fail(ctx, CodeRefusal, string(m.resp.refusal))
	}
	if kind == "completed" {
		// A call whose item never said it was done is sent at the end.
		for i := range m.resp.calls {
			if c := &m.resp.calls[i]; !c.sent {
				if err := m.respSend(ctx, c); err != nil || m.done {
					return err
				}
			}
		}
	}
	return m.complete(ctx, incomplete)
}
