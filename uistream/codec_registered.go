package uistream

import (
	"strconv"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/bridge"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// registeredEvent appends the chunks of a registered event
// (docs/contract.md sections 6.5 and 18.1): a reasoning event's text as a
// reasoning-delta of the open reasoning part (reasoning-start, id
// reasoning-<seq> of the event that opened it, after closing an open text
// part), a source as a source-url part (sourceId source-<seq>).
func (c *codec) registeredEvent(dst []byte, f replay.Frame, ev *chatprotocol.AppEvent) []byte {
	if r, ok := chatprotocol.ReasoningOf(ev); ok && c.reasoning {
		if r.Text == "" {
			return dst
		}
		dst = c.part(dst)
		if c.thought == "" {
			dst = bridge.Close(dst, &c.text, "text-end", "id")
			c.thought = "reasoning-" + strconv.FormatInt(f.Seq, 10)
			dst = bridge.End(bridge.Str(bridge.Begin(dst, "reasoning-start"), "id", c.thought))
		}
		return bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "reasoning-delta"), "id", c.thought), "delta", r.Text))
	}
	if s, ok := chatprotocol.WebSourceOf(ev); ok && c.sources {
		dst = bridge.Str(bridge.Str(bridge.Begin(c.part(dst), "source-url"), "sourceId", "source-"+strconv.FormatInt(f.Seq, 10)), "url", s.URL)
		if s.Title != "" {
			dst = bridge.Str(dst, "title", s.Title)
		}
		return bridge.End(dst)
	}
	return dst
}

// finishReasonOf maps the turn's stop reason (a provider's, as section 17.1
// has it on the lifecycle or the last step) to a finishReason of ai's
// finish chunk: "stop", "length", "tool-calls", "content-filter" or
// "other" (a reason it does not know, a turn interrupted with a card open).
// A turn that completed without a reason stopped.
func finishReasonOf(reason string, status chatprotocol.LifecycleStatus) string {
	if status != chatprotocol.LifecycleCompleted {
		return "other"
	}
	switch reason {
	case "", "stop", "end_turn", "stop_sequence", "completed":
		return "stop"
	case "length", "max_tokens", "max_output_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_calls", "tool_use", "function_call":
		return "tool-calls"
	case "content_filter", "refusal":
		return "content-filter"
	}
	return "other"
}
