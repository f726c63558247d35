package uistream

// CardMode is how a Handler's streams carry cards and how their answers
// come back ([HandlerOptions.Cards], docs/contract.md section 18.1).
type CardMode int

const (
	// CardsData, the zero value, writes a card as a data-card part and
	// its close as a data-card part of the same id in the stream that
	// carries the card_closed: a later turn's closes it in that turn's
	// message, a second part. Answers come in a POST's answer member.
	// Every ai line reads it.
	CardsData CardMode = iota
	// CardsInPlace is [CardsData] where a POST that continues the client's
	// last assistant message (its messages end with one, as ai 5's
	// sendMessage() without a message sends) streams under that message's
	// id, and a POST that lands an answer closes the card's part in its
	// stream's first chunks, from the stored card, so that the client
	// updates the part in place; a close of a card the stream did not see
	// open is not written. Every ai line reads it.
	CardsInPlace
	// CardsTools writes cards in ai 6 and 7's human-in-the-loop shapes: a
	// confirm card (no presentation, section 3.1) as a tool call of
	// [CardToolName] with a tool approval request, answered with the
	// client's addToolApprovalResponse; any other card as a client-side
	// tool call whose input is the card (its presentation and schema),
	// answered with addToolOutput. The answers are read from the tool
	// parts of the last assistant message the client sends and landed
	// like the answer member's; a POST continues the message as under
	// [CardsInPlace]. ai 5 refuses the approval chunk: ai 6 and 7 only.
	CardsTools
)

// CardToolName is the tool name of a card's tool part under [CardsTools]:
// the client's part is of type tool-card, its toolCallId and approval id
// the card's correlation id.
const CardToolName = "card"
