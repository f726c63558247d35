package agui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/bridge"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// codec turns one turn's frames into AG-UI 1.x events for one run
// (docs/contract.md section 18.2): every event and member one the 1.x core
// schema defines, extras under metadata.
type codec struct {
	threadID, runID string

	text   string      // the id of the open text message, "" when none
	step   string      // the name of the open step, "" when none
	cards  []cardState // the open cards, in the order opened
	failed *chatprotocol.ErrorEvent
	done   bool

	parser    *chatprotocol.EnvelopeParser // nil: frames are read by chatprotocol.ParseEnvelope
	reasoning bool                         // the registry has the reasoning event
	sources   bool                         // the registry has the source event
	thought   string                       // the id of the open reasoning message, "" when none
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

// cardState is an open card: its correlation id, its event and its
// canonical JSON.
type cardState struct {
	id   string
	card *chatprotocol.CardEvent
	json json.RawMessage
}

// Done reports whether the events so far end the run.
func (c *codec) Done() bool { return c.done }

// Maps reports whether t is an event type of docs/contract.md section 6,
// or a registered event the codec was given (section 6.5): a product
// type's bytes travel on the version-1 stream only.
func (c *codec) Maps(t string) bool {
	switch t {
	case chatprotocol.EventTypeReasoning:
		return c.reasoning
	case chatprotocol.EventTypeSource:
		return c.sources
	}
	return builtin(t)
}

// Append appends the events of f, whose envelope is env, to dst.
func (c *codec) Append(dst []byte, f replay.Frame, env chatprotocol.ChatEventEnvelope) ([]byte, error) {
	switch ev := env.Event.(type) {
	case *chatprotocol.AppEvent:
		if r, ok := chatprotocol.ReasoningOf(ev); ok {
			return c.reason(dst, f, env.TurnID, r.Text), nil
		}
	case *chatprotocol.DeltaEvent:
		dst = c.endReasoning(dst)
		if c.text == "" {
			c.text = env.TurnID + "-m" + strconv.FormatInt(f.Seq, 10)
			dst = bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "TEXT_MESSAGE_START"), "messageId", c.text), "role", "assistant"))
		}
		return bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "TEXT_MESSAGE_CONTENT"), "messageId", c.text), "delta", ev.Text)), nil
	case *chatprotocol.ToolCallEvent:
		dst = c.endText(dst)
		dst = bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "TOOL_CALL_START"), "toolCallId", ev.CallID), "toolCallName", ev.Name))
		if ev.Input != nil {
			dst = bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "TOOL_CALL_ARGS"), "toolCallId", ev.CallID), "delta", string(ev.Input)))
		}
		return bridge.End(bridge.Str(bridge.Begin(dst, "TOOL_CALL_END"), "toolCallId", ev.CallID)), nil
	case *chatprotocol.ToolResultEvent:
		dst = bridge.Str(bridge.Str(bridge.Begin(c.endText(dst), "TOOL_CALL_RESULT"), "messageId", ev.CallID+"-result"), "toolCallId", ev.CallID)
		dst = bridge.Str(bridge.Str(dst, "content", string(ev.Output)), "role", "tool")
		if ev.Status != chatprotocol.ToolResultOK {
			dst = append(bridge.Str(append(dst, `,"metadata":{"chatprotocol":{`...), "status", string(ev.Status)), "}}"...)
		}
		return bridge.End(dst), nil
	case *chatprotocol.StateEvent:
		return bridge.End(bridge.Raw(bridge.Begin(c.endText(dst), "STATE_SNAPSHOT"), "snapshot", ev.Snapshot)), nil
	case *chatprotocol.ErrorEvent:
		if c.failed == nil {
			c.failed = ev
		}
		return dst, nil
	case *chatprotocol.LifecycleEvent:
		return c.lifecycle(c.endText(dst), ev), nil
	case *chatprotocol.CardEvent:
		card, err := ev.CardJSON() // as stored: unknown members kept, no HTML escape
		if err != nil {
			return dst, err
		}
		c.closeCard(ev.Card.CorrelationID)
		c.cards = append(c.cards, cardState{id: ev.Card.CorrelationID, card: ev, json: card})
		return custom(c.endText(dst), "card", card), nil
	case *chatprotocol.CardClosedEvent:
		c.closeCard(ev.CorrelationID)
	case *chatprotocol.StepEvent:
		return c.modelStep(c.endText(dst), ev), nil
	}
	value, err := eventJSON(env.Event)
	if err != nil {
		return dst, err
	}
	return custom(c.endText(dst), f.Type, value), nil
}

// eventJSON is ev's canonical JSON, as the frame stores it
// (docs/contract.md section 5.4): its own MarshalJSON, not json.Marshal,
// which would escape <, > and & in it.
func eventJSON(ev chatprotocol.Event) (json.RawMessage, error) {
	m, ok := ev.(json.Marshaler)
	if !ok {
		return nil, fmt.Errorf("agui: event %T writes no JSON", ev)
	}
	return m.MarshalJSON()
}

// builtin reports whether t is an event type of docs/contract.md section 6.
func builtin(t string) bool {
	switch t {
	case "session", "lifecycle", "delta", "tool_call", "tool_result", "result", "provenance", "error", "step",
		"card", "card_closed", "state", "capabilities", "navigate":
		return true
	}
	return false
}

// custom appends a CUSTOM event named chatprotocol.typ carrying value.
func custom(dst []byte, typ string, value json.RawMessage) []byte {
	return bridge.End(bridge.Raw(bridge.Str(bridge.Begin(dst, "CUSTOM"), "name", "chatprotocol."+typ), "value", value))
}

func (c *codec) closeCard(id string) {
	c.cards = slices.DeleteFunc(c.cards, func(s cardState) bool { return s.id == id })
}

// endText closes the open text message, and the open reasoning message,
// if any.
func (c *codec) endText(dst []byte) []byte {
	return bridge.Close(c.endReasoning(dst), &c.text, "TEXT_MESSAGE_END", "messageId")
}

// reason appends a reasoning event's text (docs/contract.md section
// 18.2): REASONING_START and REASONING_MESSAGE_START (messageId
// <turn>-r<seq>, role reasoning) when no reasoning message is open, after
// closing an open text message, then REASONING_MESSAGE_CONTENT. An empty
// text is nothing.
func (c *codec) reason(dst []byte, f replay.Frame, turnID, text string) []byte {
	if text == "" {
		return dst
	}
	if c.thought == "" {
		dst = bridge.Close(dst, &c.text, "TEXT_MESSAGE_END", "messageId")
		c.thought = turnID + "-r" + strconv.FormatInt(f.Seq, 10)
		dst = bridge.End(bridge.Str(bridge.Begin(dst, "REASONING_START"), "messageId", c.thought))
		dst = bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "REASONING_MESSAGE_START"), "messageId", c.thought), "role", "reasoning"))
	}
	return bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "REASONING_MESSAGE_CONTENT"), "messageId", c.thought), "delta", text))
}

// endReasoning closes the open reasoning message and its span, if any:
// REASONING_MESSAGE_END, REASONING_END.
func (c *codec) endReasoning(dst []byte) []byte {
	if c.thought == "" {
		return dst
	}
	id := c.thought
	dst = bridge.Close(dst, &c.thought, "REASONING_MESSAGE_END", "messageId")
	return bridge.End(bridge.Str(bridge.Begin(dst, "REASONING_END"), "messageId", id))
}

// lifecycle ends the run at the turn's end, or at an interruption while a
// card is open: RUN_FINISHED (success, interrupt with the open cards, or
// cancelled) or RUN_ERROR.
func (c *codec) lifecycle(dst []byte, ev *chatprotocol.LifecycleEvent) []byte {
	switch ev.Status {
	case chatprotocol.LifecycleCompleted:
	case chatprotocol.LifecycleInterrupted:
		if len(c.cards) == 0 {
			return dst
		}
	case chatprotocol.LifecycleFailed:
		c.done = true
		dst = bridge.Begin(dst, "RUN_ERROR")
		switch {
		case c.failed != nil:
			dst = bridge.Str(bridge.Str(dst, "message", c.failed.Message), "code", string(c.failed.Code))
		case ev.Reason != "":
			dst = bridge.Str(dst, "message", ev.Reason)
		default:
			dst = bridge.Str(dst, "message", "the turn failed")
		}
		return bridge.End(c.usage(dst, ev))
	case chatprotocol.LifecycleCancelled:
		c.done = true
		return bridge.End(c.usage(append(c.finished(dst), `,"outcome":{"type":"cancelled"}`...), ev))
	default:
		return dst // started, needs-reconciliation
	}
	c.done = true
	dst = c.finished(dst)
	if len(c.cards) == 0 {
		return bridge.End(c.usage(append(dst, `,"outcome":{"type":"success"}`...), ev))
	}
	dst = append(dst, `,"outcome":{"type":"interrupt","interrupts":[`...)
	for i, s := range c.cards {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = interrupt(dst, s)
	}
	return bridge.End(c.usage(append(dst, "]}"...), ev))
}

// finished opens a RUN_FINISHED event of the run, after the open step's
// STEP_FINISHED: a client refuses a run that finishes with a step open.
func (c *codec) finished(dst []byte) []byte {
	dst = c.finishStep(dst, nil)
	return bridge.Str(bridge.Str(bridge.Begin(dst, "RUN_FINISHED"), "threadId", c.threadID), "runId", c.runID)
}

// modelStep maps a step event (docs/contract.md section 18.2): started is
// STEP_STARTED named step-<n>, after the STEP_FINISHED of a step still
// open; an end is the open step's STEP_FINISHED, a status other than
// finished and the reason under metadata.chatprotocol. A client refuses a
// step started twice or finished unstarted, so an end finishes the step
// the stream opened, whatever number it carries.
func (c *codec) modelStep(dst []byte, ev *chatprotocol.StepEvent) []byte {
	if ev.Status != chatprotocol.StepStarted {
		return c.finishStep(dst, ev)
	}
	dst = c.finishStep(dst, nil)
	c.step = "step-" + strconv.FormatInt(ev.Step, 10)
	return bridge.End(bridge.Str(bridge.Begin(dst, "STEP_STARTED"), "stepName", c.step))
}

// finishStep appends the STEP_FINISHED of the open step, if any, with the
// status and reason of end (nil: none).
func (c *codec) finishStep(dst []byte, end *chatprotocol.StepEvent) []byte {
	if c.step == "" {
		return dst
	}
	dst = bridge.Str(bridge.Begin(dst, "STEP_FINISHED"), "stepName", c.step)
	c.step = ""
	if end != nil && (end.Status != chatprotocol.StepFinished || end.Reason != "") {
		dst = append(dst, `,"metadata":{"chatprotocol":{`...)
		if end.Status != chatprotocol.StepFinished {
			dst = bridge.Str(dst, "status", string(end.Status))
		}
		if end.Reason != "" {
			dst = bridge.Str(dst, "reason", end.Reason)
		}
		dst = append(dst, "}}"...)
	}
	return bridge.End(dst)
}

// usage adds the turn's token count, when it has one, as a usage entry.
func (c *codec) usage(dst []byte, ev *chatprotocol.LifecycleEvent) []byte {
	if ev.Usage == nil || ev.Usage.TotalTokens == nil {
		return dst
	}
	return append(strconv.AppendInt(append(dst, `,"usage":[{"totalTokens":`...), *ev.Usage.TotalTokens, 10), "}]"...)
}

// interrupt appends the Interrupt of an open card (docs/contract.md
// section 18.2): its correlation id, the prompt, the answer's schema, the
// deadline, and the card itself under metadata.
func interrupt(dst []byte, s cardState) []byte {
	card := &s.card.Card
	dst = bridge.Str(bridge.Str(append(dst, '{'), "id", s.id), "reason", "chatprotocol.card")
	dst = bridge.Str(dst, "message", card.Prompt)
	var schema bytes.Buffer // the card's text may hold line breaks, which would end the data line
	if card.DataSchemaJSON != "" && json.Compact(&schema, []byte(card.DataSchemaJSON)) == nil {
		dst = bridge.Raw(dst, "responseSchema", schema.Bytes())
	}
	if card.TimeoutMs > 0 {
		at := time.UnixMilli(card.CreatedAt + card.TimeoutMs).UTC()
		dst = bridge.Str(dst, "expiresAt", at.Format("2006-01-02T15:04:05.000Z07:00"))
	}
	dst = bridge.Raw(append(dst, `,"metadata":{"chatprotocol":{`...), "card", s.json)
	return append(dst, "}}}"...)
}
