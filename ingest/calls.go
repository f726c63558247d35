package ingest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
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

// fragment adds one fragment of the call's arguments, within m's bound.
func (m *Mapper) fragment(c *toolCall, text []byte) {
	c.streamed = true
	m.buffer(&c.args, text, pathInput)
}

// setWhole sets the call's arguments given whole, within m's bound.
func (m *Mapper) setWhole(c *toolCall, args []byte) {
	c.whole = c.whole[:0]
	m.buffer(&c.whole, args, pathInput)
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

// calls are a turn's tool calls, in the order they are sent, each found
// by its provider's key in constant time: Chat's tool call index or
// Anthropic's block index (the latest call at that index), or the Responses
// output item's id.
type calls struct {
	list    []*toolCall
	byIndex map[int64]*toolCall
	byItem  map[string]*toolCall
}

// at returns the latest call at index, nil when there is none.
func (cs *calls) at(index int64) *toolCall { return cs.byIndex[index] }

// item returns the call of output item id, nil when there is none.
func (cs *calls) item(id string) *toolCall { return cs.byItem[id] }

// add adds c after the others, the latest call at its index.
func (cs *calls) add(c *toolCall) *toolCall {
	cs.list = append(cs.list, c)
	cs.keyIndex(c)
	return c
}

// addItem adds c after the others, the call of its output item.
func (cs *calls) addItem(c *toolCall) *toolCall {
	cs.list = append(cs.list, c)
	if cs.byItem == nil {
		cs.byItem = map[string]*toolCall{}
	}
	cs.byItem[c.item] = c
	return c
}

// keyIndex makes c the call found at its index.
func (cs *calls) keyIndex(c *toolCall) {
	if cs.byIndex == nil {
		cs.byIndex = map[int64]*toolCall{}
	}
	cs.byIndex[c.index] = c
}

// insert adds c in index order, the order of a list kept by index
// (Anthropic's blocks): after the others when its index is the largest,
// the usual case, else at its place.
func (cs *calls) insert(c *toolCall) {
	if n := len(cs.list); n == 0 || cs.list[n-1].index < c.index {
		cs.add(c)
		return
	}
	at, _ := slices.BinarySearchFunc(cs.list, c.index, func(e *toolCall, i int64) int { return cmp.Compare(e.index, i) })
	cs.list = slices.Insert(cs.list, at, c)
	cs.keyIndex(c)
}

// last returns the latest call added, nil when there is none.
func (cs *calls) last() *toolCall {
	if len(cs.list) == 0 {
		return nil
	}
	return cs.list[len(cs.list)-1]
}

// reset forgets every call.
func (cs *calls) reset() {
	clear(cs.list)
	cs.list = cs.list[:0]
	clear(cs.byIndex)
	clear(cs.byItem)
}

// sendCalls sends every call not sent yet, in order, until the turn ends.
func (m *Mapper) sendCalls(ctx context.Context) error {
	for _, c := range m.calls.list {
		if !c.sent {
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
	if m.over != nil {
		return m.overflow(ctx)
	}
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
