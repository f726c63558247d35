package uistream

import (
	"encoding/json"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/internal/bridge"
)

// card appends the chunks of an open card (docs/contract.md section
// 18.1): a data-card part, or under CardsTools a tool call of
// CardToolName whose input is the card as stored, with a tool approval
// request when it is a confirm card.
func (c *codec) card(dst []byte, ev *chatprotocol.CardEvent) ([]byte, error) {
	card, err := ev.CardJSON() // as stored: unknown members kept, no HTML escape
	if err != nil {
		return dst, err
	}
	id := ev.Card.CorrelationID
	c.cards[id] = card
	if c.mode != CardsTools {
		return cardPart(c.part(dst), id, "open", card, ""), nil
	}
	dst = toolInput(c.endText(c.part(dst)), id, CardToolName, card)
	if ev.Card.Presentation != nil {
		c.asks[id] = true // a client-side tool: addToolOutput answers it
		return dst, nil
	}
	return bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "tool-approval-request"), "approvalId", id), "toolCallId", id)), nil
}

// cardClosed appends the chunks of a card's close: under CardsData a
// data-card part of the card's id, card null when this stream did not see
// it open; under the other modes nothing for such a card, whose part is in
// a message this stream does not write, else its data-card part, or the
// tool output that ends its tool part (outcome answered: output
// {"outcome":"answered"}).
func (c *codec) cardClosed(dst []byte, ev *chatprotocol.CardClosedEvent) []byte {
	id := ev.CorrelationID
	card, seen := c.cards[id]
	ask := c.asks[id]
	delete(c.cards, id)
	delete(c.asks, id)
	switch {
	case c.mode == CardsData:
		return cardPart(c.part(dst), id, "closed", card, ev.Outcome)
	case !seen:
		return dst
	case c.mode == CardsInPlace:
		return cardPart(c.part(dst), id, "closed", card, ev.Outcome)
	}
	output := append(bridge.Str([]byte("{"), "outcome", ev.Outcome), '}')
	return toolClose(c.endText(c.part(dst)), id, !ask && ev.Outcome == string(interactions.StatusDeclined), ev.Outcome, output)
}

// toolInput appends the tool-input-start and tool-input-available chunks
// of a tool call (input null when absent: the schemas require it).
func toolInput(dst []byte, id, name string, input json.RawMessage) []byte {
	dst = bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "tool-input-start"), "toolCallId", id), "toolName", name))
	return bridge.End(bridge.Raw(bridge.Str(bridge.Str(bridge.Begin(dst, "tool-input-available"), "toolCallId", id), "toolName", name), "input", orNull(input)))
}

// toolClose appends the chunk that ends a card's tool part under
// CardsTools: tool-output-denied when denied (a confirm card's approval
// refused), tool-output-available with output when the outcome is
// answered, else tool-output-error, errorText "the card was <outcome>".
func toolClose(dst []byte, id string, denied bool, outcome string, output json.RawMessage) []byte {
	switch {
	case denied:
		return bridge.End(bridge.Str(bridge.Begin(dst, "tool-output-denied"), "toolCallId", id))
	case outcome == string(interactions.StatusAnswered):
		return bridge.End(bridge.Raw(bridge.Str(bridge.Begin(dst, "tool-output-available"), "toolCallId", id), "output", orNull(output)))
	}
	if outcome == "" {
		outcome = "closed"
	}
	return bridge.End(bridge.Str(bridge.Str(bridge.Begin(dst, "tool-output-error"), "toolCallId", id), "errorText", "the card was "+outcome))
}
