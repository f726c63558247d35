package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// toolCall is one tool call a stream builds up, whatever the provider:
// found by its provider's handle (Chat's index, the Anthropic content
// block's index, the Responses output item's id), named by the first
// non-empty id and name the stream gives, with arguments streamed as
// fragments or given whole.
type toolCall struct {
	index    int64  // Chat's tool call index, Anthropic's block index
	item     string // the Responses output item's id
	id, name string
	args     []byte // the fragments, concatenated
	streamed bool   // a fragment came
	whole    []byte // the arguments given whole: Anthropic's start, a Responses done event
	custom   bool   // a custom tool's input is text, sent as a JSON string
	sent     bool
}

// fragment adds one fragment of the call's arguments.
func (c *toolCall) fragment(text []byte) {
	c.streamed = true
	c.args = append(c.args, text...)
}

// identify keeps the first non-empty id and name the stream gives the
// call (JSON strings, as views); a name repeated in every chunk is not
// concatenated.
func (c *toolCall) identify(p *views, id, name []byte) {
	if c.id == "" {
		c.id = p.str(id)
	}
	if c.name == "" {
		c.name = p.str(name)
	}
}

// arguments returns the JSON text of the call's arguments: its fragments
// when any came, else the arguments given whole; a custom tool's input
// quoted as a JSON string.
func (c *toolCall) arguments() []byte {
	args := c.whole
	if c.streamed {
		args = c.args
	}
	if !c.custom {
		return args
	}
	q, err := jsontext.AppendQuote(nil, args)
	if err != nil {
		q, _ = jsontext.AppendQuote(nil, strings.ToValidUTF8(string(args), "\uFFFD"))
	}
	return q
}

// truncated reports whether the call's arguments are not whole: not one
// JSON value, or none at all though the stream streams them (a call cut
// before its first argument byte).
func (c *toolCall) truncated() bool {
	args := c.arguments()
	if c.streamed && len(bytes.TrimSpace(args)) == 0 {
		return true
	}
	_, err := toolInput(args)
	return err != nil
}

// drop marks c as never to be announced: the provider's token limit cut it
// (docs/contract.md section 17.2).
func (c *toolCall) drop() { c.sent = true }

// findCall returns the last call with index and item, nil when there is
// none.
func (m *Mapper) findCall(index int64, item string) *toolCall {
	for i := len(m.calls) - 1; i >= 0; i-- {
		if c := &m.calls[i]; c.index == index && c.item == item {
			return c
		}
	}
	return nil
}

// addCall adds a call with index and item after the others.
func (m *Mapper) addCall(index int64, item string) *toolCall {
	m.calls = append(m.calls, toolCall{index: index, item: item})
	return &m.calls[len(m.calls)-1]
}

// sendCalls sends every call not sent yet, in order, until the turn ends.
func (m *Mapper) sendCalls(ctx context.Context) error {
	for i := range m.calls {
		if c := &m.calls[i]; !c.sent {
			if err := m.send(ctx, c); err != nil || m.done {
				return err
			}
		}
	}
	return nil
}

// send sends c, once, or fails the turn when it cannot be a tool call: no
// id, no name, or arguments that are not one JSON value.
func (m *Mapper) send(ctx context.Context, c *toolCall) error {
	c.sent = true
	if c.id == "" || c.name == "" {
		what := "an id"
		if c.id != "" {
			what = "a name"
		}
		return m.fail(ctx, CodeInvalidToolCall, "the provider sent a tool call without "+what)
	}
	input, err := toolInput(c.arguments())
	if err != nil {
		return m.fail(ctx, CodeInvalidToolCall, "the arguments of tool call "+c.id+" are not one JSON value: "+err.Error())
	}
	if err := m.provenance(ctx); err != nil {
		return err
	}
	m.emitted = true
	return m.sink.AnnounceToolCall(ctx, c.id, c.name, input)
}

// toolInput returns the compact JSON of args, nil for none.
func toolInput(args []byte) (json.RawMessage, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		return nil, nil
	}
	out, err := jsontext.AppendFormat(nil, args)
	if err != nil {
		return nil, err
	}
	if deeper(out, maxInputDepth) {
		return nil, errors.New("nested too deep")
	}
	return out, nil
}

// deeper reports whether the compact JSON v nests more than limit levels.
func deeper(v []byte, limit int) bool {
	depth, in := 0, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case in:
			if c == '\\' {
				i++
			} else if c == '"' {
				in = false
			}
		case c == '"':
			in = true
		case c == '{' || c == '[':
			if depth++; depth > limit {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}
