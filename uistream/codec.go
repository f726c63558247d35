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
	mode         CardMode // how cards are written (codec_cards.go)

	step   bool                       // a start-step was written and no finish-step yet
	used   bool                       // a part was written since the open step's start-step
	steps  bool                       // the turn writes step events: they decide the message's steps
	text   string                     // the id of the open text part, "" when none
	cards  map[string]json.RawMessage // the open cards by correlation id, their canonical JSON
	asks   map[string]bool            // under CardsTools, the open cards that are not confirm cards
	failed string                     // the errorText of the turn's first error event
	done   bool

	parser    *chatprotocol.EnvelopeParser // nil: frames are read by chatprotocol.ParseEnvelope
	reasoning bool                         // the registry has the reasoning event
	sources   bool                         // the registry has the source event
	thought   string                       // the id of the open reasoning part, "" when none
	reason    string                       // the turn's stop reason: its lifecycle's, else its last step's
}

// registered makes the codec map the registered events of reg
// (docs/contract.md section 6.5), reading its frames with reg.
func (c *codec) registered(reg *chatprotocol.Registry) {
	c.reasoning, c.sources = reg.Registered(chatprotocol.EventTypeReasoning), reg.Registered(chatprotocol.EventTypeSource)
	if c.reasoning || c.sources {
		c.parser = chatprotocol.NewEnvelopeParser(&chatprotocol.ParserOptions{Registry: reg})
	}
}

// Parser returns the parser of the codec's frames ([serve.ParsingCodec]).
func (c *codec) Parser() *chatprotocol.EnvelopeParser { return c.parser }

func newCodec(finishReason bool, mode CardMode) *codec {
	return &codec{finishReason: finishReason, mode: mode, cards: make(map[string]json.RawMessage), asks: make(map[string]bool)}
}

// Done reports whether the chunks so far end the message.
func (c *codec) Done() bool { return c.done }

// Maps reports whether frames of type t may add a chunk: not session,
// provenance, result, state, capabilities, navigate or a product type; a
// registered event only when the codec was given it.
func (c *codec) Maps(t string) bool {
	switch t {
	case chatprotocol.EventTypeReasoning:
		return c.reasoning
	case chatprotocol.EventTypeSource:
		return c.sources
	}
	return mapped(t)
}

// Append appends the chunks of f, whose envelope is env, to dst.
func (c *codec) Append(dst []byte, f replay.Frame, env chatprotocol.ChatEventEnvelope) ([]byte, error) {
	switch ev := env.Event.(type) {
	case *chatprotocol.AppEvent:
		return c.registeredEvent(dst, f, ev), nil
	case *chatprotocol.DeltaEvent:
		dst = c.endReasoning(c.part(dst))
		if c.text == "" {
			c.text = "text-" + strconv.FormatInt(f.Seq, 10)
			dst = bridge.End(bridge.Str(bridge.Begin(dst, "text-start"), "id", c.text))
		}
		return bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "text-delta"), "id", c.text), "delta", ev.Text)), nil
	case *chatprotocol.ToolCallEvent:
		return toolInput(c.endText(c.part(dst)), ev.CallID, ev.Name, ev.Input), nil
	case *chatprotocol.ToolResultEvent:
		dst = c.endText(c.part(dst))
		if ev.Status == chatprotocol.ToolResultOK {
			return bridge.End(bridge.Raw(bridge.Str(bridge.Begin(dst, "tool-output-available"), "toolCallId", ev.CallID), "output", orNull(ev.Output))), nil
		}
		return bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "tool-output-error"), "toolCallId", ev.CallID), "errorText", toolErrorText(ev))), nil
	case *chatprotocol.CardEvent:
		return c.card(dst, ev)
	case *chatprotocol.CardClosedEvent:
		return c.cardClosed(dst, ev), nil
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
		if ev.Reason != "" {
			c.reason = ev.Reason
		}
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
	reason := ""
	if c.finishReason {
		reason = finishReasonOf(c.reason, ev.Status)
	}
	return finish(c.finishStep(dst), reason)
}

// finish appends the finish chunk, with finishReason unless reason is ""
// (ai 5.0.0's strict schema refuses the member).
func finish(dst []byte, reason string) []byte {
	if reason != "" {
		return bridge.End(bridge.Str(bridge.Begin(dst, "finish"), "finishReason", reason))
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
		c.reason = ev.Reason
		return c.finishStep(dst)
	}
	if c.step && !c.used {
		return dst
	}
	return c.startStep(c.finishStep(dst))
}

// endText closes the open text part, and the open reasoning part, if any.
func (c *codec) endText(dst []byte) []byte {
	return bridge.Close(c.endReasoning(dst), &c.text, "text-end", "id")
}

// endReasoning closes the open reasoning part, if any.
func (c *codec) endReasoning(dst []byte) []byte {
	return bridge.Close(dst, &c.thought, "reasoning-end", "id")
}

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
	return errorText(string(ev.Status), ev.Output)
}

// errorText is the errorText of a tool call of status with output.
func errorText(status string, output json.RawMessage) string {
	if output == nil {
		return "the tool call " + status
	}
	var s string
	if json.Unmarshal(output, &s) == nil {
		return s
	}
	return string(output)
}
