package agent

import (
	"context"
	"strings"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// stepRecord is one model step as a turn's stream holds it: its end, its
// text (the deltas between its start and its end) and its tool calls.
type stepRecord struct {
	status  chatprotocol.StepStatus
	reason  string
	text    strings.Builder
	calls   []Call
	emitted bool
}

// transcript is a turn's steps and its tool results, read from its
// stream (docs/contract.md section 19.4).
type transcript struct {
	steps   []*stepRecord
	results map[string]Result // by call id
}

// readTranscript reads the retained frames of key's turn from w and
// groups its deltas and tool calls by step; deltas and calls outside a
// step are not the conversation's. A turn whose start the window pruned
// is refused with stale-cursor.
func readTranscript(ctx context.Context, w replay.Window, key replay.Key) (*transcript, error) {
	b, err := w.Bounds(ctx, key)
	if err != nil {
		return nil, err
	}
	if b.Lower > 0 {
		return nil, refusal.New(refusal.CodeStaleCursor, "", "the window no longer retains the turn's start: its steps are unknown")
	}
	t := &transcript{results: map[string]Result{}}
	var open *stepRecord
	names := map[string]string{} // call id → tool name
	_, err = replay.Each(ctx, w, key, 0, func(f replay.Frame) error {
		switch f.Type {
		case chatprotocol.EventTypeStep, chatprotocol.EventTypeDelta, chatprotocol.EventTypeToolCall, chatprotocol.EventTypeToolResult:
		default:
			return nil
		}
		env, err := chatprotocol.ParseEnvelope(f.Data)
		if err != nil {
			return err
		}
		switch ev := env.Event.(type) {
		case *chatprotocol.StepEvent:
			if ev.Status == chatprotocol.StepStarted {
				open = &stepRecord{}
				t.steps = append(t.steps, open)
			} else if open != nil {
				open.status, open.reason = ev.Status, ev.Reason
				open = nil
			}
		case *chatprotocol.DeltaEvent:
			if open != nil {
				open.text.WriteString(ev.Text)
				open.emitted = true
			}
		case *chatprotocol.ToolCallEvent:
			if open != nil {
				open.calls = append(open.calls, Call{ID: ev.CallID, Name: ev.Name, Input: ev.Input})
				open.emitted = true
				names[ev.CallID] = ev.Name
			}
		case *chatprotocol.ToolResultEvent:
			t.results[ev.CallID] = Result{CallID: ev.CallID, Name: names[ev.CallID], Output: ev.Output,
				IsError: ev.Status != chatprotocol.ToolResultOK}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// TurnMessages returns the conversation of key's turn as a model reads it
// on a later turn (docs/contract.md section 19.4): one assistant
// [Message] per step that finished or was interrupted (its text and its
// calls), each followed by a tool message with the results on the stream,
// in the calls' order. Failed steps are left out, and so is reasoning,
// which the stream does not carry. A host adds its users' messages
// between turns. Refusals: stale-cursor when the window pruned the turn's
// start; the window's errors.
func TurnMessages(ctx context.Context, w replay.Window, key replay.Key) ([]Message, error) {
	t, err := readTranscript(ctx, w, key)
	if err != nil {
		return nil, err
	}
	var out []Message
	for _, s := range t.steps {
		if !s.kept() {
			continue
		}
		out = append(out, s.message())
		if len(s.calls) > 0 {
			if res := t.answered(s.calls); len(res) > 0 {
				out = append(out, Message{Role: RoleTool, Results: res})
			}
		}
	}
	return out, nil
}

// kept reports whether the step is part of the conversation: it finished,
// or was interrupted (its partial text stays).
func (s *stepRecord) kept() bool {
	return s.status == chatprotocol.StepFinished || s.status == chatprotocol.StepInterrupted
}

// message is the step as an assistant message.
func (s *stepRecord) message() Message {
	return Message{Role: RoleAssistant, Text: s.text.String(), Calls: s.calls}
}

// answered returns the results on the stream of calls, in their order.
func (t *transcript) answered(calls []Call) []Result {
	var out []Result
	for _, c := range calls {
		if r, ok := t.results[c.ID]; ok {
			r.Name = c.Name
			out = append(out, r)
		}
	}
	return out
}
