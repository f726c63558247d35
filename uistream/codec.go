package uistream

import (
	"encoding/json"
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/bridge"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// codec turns one turn's frames into UI message stream chunks
// (docs/contract.md section 18.1). It writes only chunk types and members
// that ai 5.0.0's strict chunk schema accepts, as do the 5.x, 6.x and 7.x
// lines since, unless finishReason adds finish's member that 5.0.0 lacks.
type codec struct {
	finishReason bool

	step   bool                       // a start-step was written and no finish-step yet
	used   bool                       // a part was written since the open step's start-step
	steps  bool                       // the turn writes step events: they decide the message's steps
	text   string                     // the id of the open text part, "" when none
	cards  map[string]json.RawMessage // the open cards by correlation id, their canonical JSON
	failed string                     // the errorText of the turn's first error event
	done   bool
}

func newCodec(finishReason bool) *codec {
	return &codec{finishReason: finishReason, cards: make(map[string]json.RawMessage)}
}

// Done reports whether the chunks so far end the message.
func (c *codec) Done() bool { return c.done }

// Maps reports whether frames of type t may add a chunk: not session,
// provenance, result, state, capabilities, navigate or a product type.
func (c *codec) Maps(t string) bool { return mapped(t) }

// Append appends the chunks of f, whose envelope is env, to dst.
func (c *codec) Append(dst []byte, f replay.Frame, env chatprotocol.ChatEventEnvelope) ([]byte, error) {
	switch ev := env.Event.(type) {
	case *chatprotocol.DeltaEvent:
		dst = c.part(dst)
		if c.text == "" {
			c.text = "text-" + strconv.FormatInt(f.Seq, 10)
			dst = bridge.End(bridge.Str(bridge.Begin(dst, "text-start"), "id", c.text))
		}
		return bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "text-delta"), "id", c.text), "delta", ev.Text)), nil
	case *chatprotocol.ToolCallEvent:
		dst = c.endText(c.part(dst))
		dst = bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "tool-input-start"), "toolCallId", ev.CallID), "toolName", ev.Name))
		return bridge.End(bridge.Raw(bridge.Str(bridge.Str(bridge.Begin(dst, "tool-input-available"), "toolCallId", ev.CallID), "toolName", ev.Name), "input", orNull(ev.Input))), nil
	case *chatprotocol.ToolResultEvent:
		dst = c.endText(c.part(dst))
		if ev.Status == chatprotocol.ToolResultOK {
			return bridge.End(bridge.Raw(bridge.Str(bridge.Begin(dst, "tool-output-available"), "toolCallId", ev.CallID), "output", orNull(ev.Output))), nil
		}
		return bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "tool-output-error"), "toolCallId", ev.CallID), "errorText", toolErrorText(ev))), nil
	case *chatprotocol.CardEvent:
		card, err := ev.CardJSON() // as stored: unknown members kept, no HTML escape
		if err != nil {
			return dst, err
		}
		c.cards[ev.Card.CorrelationID] = card
		return cardPart(c.part(dst), ev.Card.CorrelationID, "open", card, ""), nil
	case *chatprotocol.CardClosedEvent:
		card := c.cards[ev.CorrelationID]
		delete(c.cards, ev.CorrelationID)
		return cardPart(c.part(dst), ev.CorrelationID, "closed", card, ev.Outcome), nil
	case *chatprotocol.ErrorEvent:
		if c.failed == "" {
			c.failed = string(ev.Code) + ": " + ev.Message
		}
		return dst, nil
	case *chatprotocol.LifecycleEvent:
		return c.lifecycle(dst, ev), nil
	case *chatprotocol.StepEvent:
		return c.modelStep(dst, ev), nil
	}
	return dst, nil
}

// mapped reports whether frames of type t may add a chunk.
func mapped(t string) bool {
	switch t {
	case "delta", "tool_call", "tool_result", "card", "card_closed", "error", "lifecycle", "step":
		return true
	}
	return false
}

// lifecycle ends the message at the turn's end, or at an interruption
// while a card is open (the answer starts a new turn).
func (c *codec) lifecycle(dst []byte, ev *chatprotocol.LifecycleEvent) []byte {
	switch ev.Status {
	case chatprotocol.LifecycleStarted:
		return c.startStep(dst)
	case chatprotocol.LifecycleInterrupted:
		if len(c.cards) == 0 {
			return dst
		}
	case chatprotocol.LifecycleCompleted:
	case chatprotocol.LifecycleFailed:
		c.done = true
		text := c.failed
		if text == "" {
			text = "the turn failed"
			if ev.Reason != "" {
				text += ": " + ev.Reason
			}
		}
		return bridge.End(bridge.Str(bridge.Begin(c.endText(dst), "error"), "errorText", text))
	case chatprotocol.LifecycleCancelled:
		c.done = true
		return bridge.End(bridge.Begin(c.endText(dst), "abort"))
	default:
		return dst // needs-reconciliation: the turn goes on
	}
	c.done = true
	dst = c.finishStep(dst)
	if c.finishReason {
		return bridge.End(bridge.Str(bridge.Begin(dst, "finish"), "finishReason", "stop"))
	}
	return bridge.End(bridge.Begin(dst, "finish"))
}

// startStep opens a step of the message, unless one is open.
func (c *codec) startStep(dst []byte) []byte {
	if c.step {
		return dst
	}
	c.step, c.used = true, false
	return bridge.End(bridge.Begin(dst, "start-step"))
}

// finishStep closes the open step, if any, after its open text part:
// the client starts its next text part afresh (docs/contract.md section
// 18.1).
func (c *codec) finishStep(dst []byte) []byte {
	dst = c.endText(dst)
	if !c.step {
		return dst
	}
	c.step = false
	return bridge.End(bridge.Begin(dst, "finish-step"))
}

// part precedes a part of the message: it opens the message's step before
// its first part, unless the turn's step events decide the steps, and
// marks the open step used.
func (c *codec) part(dst []byte) []byte {
	if !c.steps {
		dst = c.startStep(dst)
	}
	c.used = true
	return dst
}

// modelStep maps a step event (docs/contract.md section 18.1): started
// opens a step, after closing the open one when it has parts (the step
// opened at the turn's start, still empty, is the first model step's);
// an end closes the open step.
func (c *codec) modelStep(dst []byte, ev *chatprotocol.StepEvent) []byte {
	c.steps = true
	if ev.Status != chatprotocol.StepStarted {
		return c.finishStep(dst)
	}
	if c.step && !c.used {
		return dst
	}
	return c.startStep(c.finishStep(dst))
}

// endText closes the open text part, if any.
func (c *codec) endText(dst []byte) []byte { return bridge.Close(dst, &c.text, "text-end", "id") }

// cardPart appends the data-card part of a card (docs/contract.md section
// 18.1): data is {"status":status,"card":card,"outcome"?}.
func cardPart(dst []byte, id, status string, card json.RawMessage, outcome string) []byte {
	if card == nil {
		card = json.RawMessage("null") // closed without an open card this stream saw
	}
	dst = append(bridge.Str(bridge.Begin(dst, "data-card"), "id", id), `,"data":{"status":"`...)
	dst = bridge.Raw(append(append(dst, status...), '"'), "card", card)
	if outcome != "" {
		dst = bridge.Str(dst, "outcome", outcome)
	}
	return bridge.End(append(dst, '}'))
}

// orNull is v, or null when absent: the chunk schemas require input and
// output (docs/contract.md section 18.1).
func orNull(v json.RawMessage) json.RawMessage {
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

// toolErrorText is the errorText of a tool_result that is not ok: its
// output when a string, else its JSON, else the status.
func toolErrorText(ev *chatprotocol.ToolResultEvent) string {
	if ev.Output == nil {
		return "the tool call " + string(ev.Status)
	}
	var s string
	if json.Unmarshal(ev.Output, &s) == nil {
		return s
	}
	return string(ev.Output)
}
