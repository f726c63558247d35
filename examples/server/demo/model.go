package demo

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/ingest"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// source is a turn's event source, the model: it writes the model's side
// of one turn on p (text, tool calls, a card) under ctx, which ends when
// the turn is cancelled or the server shuts down, and returns; the host
// then ends the turn with its error (turn.Producer.End). The scripted model
// is the only source today; one that plays a recorded provider stream
// would be another source, which a flag would choose in Run.
type source func(ctx context.Context, p *turn.Producer, todo plan) error

// plan is what the host asks of one turn's source.
type plan struct {
	// Closed are the cards this turn closed right after its start (their
	// card_closed is on the stream): the model replies to their outcome.
	Closed []interactions.Record
	// Script asks for the scripted answer: half the deltas, a tool call,
	// the other deltas.
	Script bool
	// Card, when set, is the card to ask last (turn.Producer.Ask).
	Card *interactions.NewCard
	// Messages is the conversation up to this turn, as a model reads it
	// (conversation.History.Messages): the agent loop's input.
	Messages []agent.Message
}

// The script's words and tool, the same for every turn.
var (
	words     = []string{"Refunds ", "are ", "accepted ", "within ", "30 ", "days ", "of ", "delivery. "}
	toolName  = "search_docs"
	toolInput = json.RawMessage(`{"q":"refund policy"}`)
)

// script is the scripted model: a reply per closed card, then, when
// asked, the deltas with the tool call in their middle, then the card, one
// frame every pace.
type script struct {
	deltas int
	pace   time.Duration
	log    *slog.Logger
}

// play is the script's source.
func (s script) play(ctx context.Context, p *turn.Producer, todo plan) error {
	for _, card := range todo.Closed {
		if err := s.step(ctx); err != nil {
			return err
		}
		if err := p.Delta(ctx, reply(card)); err != nil {
			return err
		}
	}
	if todo.Script {
		if err := s.answer(ctx, p); err != nil {
			return err
		}
	}
	if todo.Card != nil {
		if err := s.step(ctx); err != nil {
			return err
		}
		if _, err := p.Ask(ctx, *todo.Card); err != nil {
			return err
		}
	}
	return s.step(ctx)
}

// answer writes the scripted answer: the deltas, and the tool call after
// the first half of them.
func (s script) answer(ctx context.Context, p *turn.Producer) error {
	for i := range s.deltas {
		if err := s.step(ctx); err != nil {
			return err
		}
		if i == s.deltas/2 {
			call := turn.ToolCall{ID: p.Key().TurnID + "-call-1", Name: toolName, Input: toolInput}
			if _, err := p.RunToolCall(ctx, call, searchDocs(p.Key(), call.Input, s.log)); err != nil {
				return err
			}
		}
		if err := p.Delta(ctx, words[i%len(words)]); err != nil {
			return err
		}
	}
	return nil
}

// step waits the model's pace between two frames, or until ctx ends.
func (s script) step(ctx context.Context) error {
	select { // time.After's timer is collected once it fires or is dropped (Go 1.23)
	case <-time.After(s.pace):
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// articles are what search_docs searches.
var articles = []string{
	"Refund policy: refunds are accepted within 30 days of delivery.",
	"Refund policy for gift cards: gift cards are refunded as store credit.",
	"Shipping: orders leave the warehouse within two working days.",
}

// searchDocs is the demo's one tool, a local function with no other effect
// than its log line: it counts the articles holding every word of the
// query. Recovery launches it at most once per call (the log line shows it).
func searchDocs(key replay.Key, input json.RawMessage, log *slog.Logger) turn.Tool {
	return func(context.Context) (json.RawMessage, error) {
		log.Info("tool launched", "conversation", key.ConversationID, "turn", key.TurnID, "tool", toolName)
		return search(input)
	}
}

// search answers a search_docs call: the number of articles holding every
// word of the query q.
func search(input json.RawMessage) (json.RawMessage, error) {
	var in struct{ Q string }
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, &turn.ToolError{Status: chatprotocol.ToolResultError}
	}
	hits := 0
	for _, a := range articles {
		found := true
		for _, w := range strings.Fields(strings.ToLower(in.Q)) {
			found = found && strings.Contains(strings.ToLower(a), w)
		}
		if found {
			hits++
		}
	}
	return json.Marshal(map[string]int{"hits": hits})
}

// helpful is the schema of the demo card's answers.
var helpful = interactions.SchemaRef{ID: "helpful", Revision: 1}

const helpfulSchema = `{"type":"object","properties":{"optionId":{"enum":["yes","no"]}},"required":["optionId"]}`

// cardID is the correlation id of the card a turn asks: card-<turnId>.
func cardID(turnID string) string { return "card-" + turnID }

// helpfulCard is the card a scripted turn asks, bound to answerer, the
// conversation's owner.
func helpfulCard(conversation, turnID string, answerer interactions.Caller) *interactions.NewCard {
	return &interactions.NewCard{
		Key:      interactions.Key{Conversation: conversation, CorrelationID: cardID(turnID)},
		Answerer: answerer,
		Spec: cards.CardSpec{Prompt: "Was this helpful?", AllowDecline: true, Presentation: &cards.CardPresentation{
			Kind: cards.CardKindRadio, Options: []cards.CardOption{{ID: "yes", Label: "Yes"}, {ID: "no", Label: "No"}}}},
		Schema: helpful,
	}
}

// reply is the model's answer to a closed card.
func reply(card interactions.Record) string {
	switch card.Status {
	case interactions.StatusAnswered:
		var v struct {
			OptionID string `json:"optionId"`
		}
		if card.Answer != nil && json.Unmarshal(card.Answer.Value, &v) == nil && v.OptionID == "yes" {
			return "Glad it helped. "
		}
		return "Sorry it did not help; a person will follow up. "
	case interactions.StatusDeclined:
		return "Understood. "
	}
	return "That question is closed. "
}

// answerText is the user's text of a turn a card's answer starts: the
// option chosen, "declined", or the card's status.
func answerText(card interactions.Record) string {
	var v struct {
		OptionID string `json:"optionId"`
	}
	switch {
	case card.Status == interactions.StatusAnswered && card.Answer != nil && json.Unmarshal(card.Answer.Value, &v) == nil && v.OptionID != "":
		return v.OptionID
	case card.Status == interactions.StatusDeclined:
		return "declined"
	}
	return string(card.Status)
}

// recorded plays a recorded provider stream (the raw SSE body a provider
// sent, docs/contract.md section 17) as the model, through
// ingest.ProducerSink: its text, its tool calls (announced, not run) and
// its end, one event every pace. The provider's end ends the turn, so a
// recorded turn asks no card.
type recorded struct {
	file string
	kind ingest.Kind
	pace time.Duration
}

// play is the recorded stream's source.
func (m recorded) play(ctx context.Context, p *turn.Producer, _ plan) error {
	body, err := os.Open(m.file)
	if err != nil {
		return err
	}
	defer body.Close()
	opts := &ingest.Options{StreamReasoning: true, StreamSources: true}
	err = ingest.Read(ctx, m.kind, body, paced{ingest.ProducerSink(p), m.pace}, opts)
	if errors.Is(err, ingest.ErrCut) {
		return nil // the turn ended failed, as the stream was cut
	}
	return err
}

// paced waits pace before each text, reasoning and tool call it passes on.
type paced struct {
	ingest.Sink
	pace time.Duration
}

func (s paced) wait(ctx context.Context) error {
	select {
	case <-time.After(s.pace):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s paced) Delta(ctx context.Context, text string) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Sink.Delta(ctx, text)
}

func (s paced) Reasoning(ctx context.Context, text string) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Sink.(ingest.ReasoningSink).Reasoning(ctx, text)
}

func (s paced) Source(ctx context.Context, src chatprotocol.WebSource) error {
	return s.Sink.(ingest.SourceSink).Source(ctx, src)
}

func (s paced) AnnounceToolCall(ctx context.Context, callID, name string, input json.RawMessage) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.Sink.AnnounceToolCall(ctx, callID, name, input)
}
