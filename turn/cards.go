package turn

import (
	"context"
	"errors"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// ErrCardOpen is returned by CloseCard for a card still pending: nothing
// closed it yet (Resolver.Wait returns once something has).
var ErrCardOpen = errors.New("turn: the card is still pending")

// cardState is where a card stands on this turn's stream.
type cardState int

const (
	cardOpen   cardState = iota + 1 // its card event is on the stream
	cardClosed                      // its card_closed is on the stream
)

// noCards is the refusal of a card call without Options.Cards.
func noCards() error {
	return refusal.New(refusal.CodeStoreUnavailable, "", "the producer has no card resolver (Options.Cards)")
}

// Ask opens card with the resolver and appends its card event, built from
// the stored record ([interactions.Record.Snapshot] with the schema's text):
// docs/contract.md sections 3 and 13.2. card.Key.Conversation "" means the
// turn's. The answer comes back through [interactions.Resolver.Wait];
// [Producer.CloseCard] then closes the card on the stream. On a resumed turn, asking again for a
// card already on the stream returns its record and appends nothing.
//
// Refusals: Open's (invalid-card, card-exists …), invalid-card for another
// conversation, turn-terminated after the end, stale-cursor on a resumed
// turn whose start the window pruned, store-unavailable without
// [Options.Cards], and those of Delta.
func (p *Producer) Ask(ctx context.Context, card interactions.NewCard) (interactions.Record, error) {
	if p.res == nil {
		return interactions.Record{}, noCards()
	}
	if card.Key.Conversation == "" {
		card.Key.Conversation = p.key.ConversationID
	}
	if card.Key.Conversation != p.key.ConversationID {
		return interactions.Record{}, refusal.New(refusal.CodeInvalidCard, "/key/conversation", "a turn asks cards of its own conversation")
	}
	p.mu.Lock()
	err := p.writable(ctx)
	if err == nil && p.pruned {
		err = prunedStart()
	}
	_, onStream := p.cards[card.Key.CorrelationID]
	p.mu.Unlock()
	if err != nil {
		return interactions.Record{}, err
	}
	rec, err := p.res.Open(ctx, card)
	if errors.Is(err, refusal.ErrCardExists) && onStream {
		v, lerr := p.res.Lookup(ctx, card.Key)
		return v.Record, lerr
	}
	if errors.Is(err, refusal.ErrCardExists) { // opened before a restart, never shown
		v, lerr := p.res.Lookup(ctx, card.Key)
		if lerr != nil || v.Record.Status.Terminal() {
			return v.Record, err
		}
		rec, err = v.Record, nil
	}
	if err != nil {
		return interactions.Record{}, err
	}
	text := ""
	if p.schema != nil {
		text, _ = p.schema(rec.Schema)
	}
	return rec, p.append(ctx, &chatprotocol.CardEvent{Card: rec.Snapshot(text)})
}

// CloseCard appends card_closed for the card of correlationID once it is
// closed, its outcome the card's terminal status (answered, declined,
// cancelled, expired, superseded): docs/contract.md section 13.2, item 8.
// A card past its deadline is expired first ([interactions.Resolver.Expire]). The turn that
// carries the conversation on closes it: the asking turn while it runs,
// otherwise the next turn, right after Start. Closing a card this turn
// already closed returns its record and appends nothing.
//
// Refusals: [ErrCardOpen] for a card still pending; Lookup's and Expire's;
// turn-terminated after the end; store-unavailable without [Options.Cards].
func (p *Producer) CloseCard(ctx context.Context, correlationID string) (interactions.Record, error) {
	if p.res == nil {
		return interactions.Record{}, noCards()
	}
	rec, err := p.terminalRecord(ctx, interactions.Key{Conversation: p.key.ConversationID, CorrelationID: correlationID})
	if err != nil {
		return rec, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.writable(ctx); err != nil {
		return rec, err
	}
	return rec, p.appendClosed(ctx, rec)
}

// CancelCard cancels the card of correlationID in the store
// ([interactions.Resolver.Cancel], with reason) and closes it on the
// stream as [Producer.CloseCard] does; a card closed meanwhile closes with
// its own status.
func (p *Producer) CancelCard(ctx context.Context, correlationID, reason string) (interactions.Record, error) {
	if p.res == nil {
		return interactions.Record{}, noCards()
	}
	key := interactions.Key{Conversation: p.key.ConversationID, CorrelationID: correlationID}
	if _, err := p.res.Cancel(ctx, key, reason); err != nil && !closedAlready(err) {
		return interactions.Record{}, err
	}
	return p.CloseCard(ctx, correlationID)
}

// closedAlready reports whether err is the late refusal of a closed card.
func closedAlready(err error) bool {
	switch refusal.CodeOf(err) {
	case refusal.CodeAlreadyAnswered, refusal.CodeCardCancelled, refusal.CodeAnswerExpired, refusal.CodeCardSuperseded:
		return true
	}
	return false
}

// terminalRecord returns the card's terminal record, storing its expiry
// when its deadline passed.
func (p *Producer) terminalRecord(ctx context.Context, key interactions.Key) (interactions.Record, error) {
	v, err := p.res.Lookup(ctx, key)
	if err != nil {
		return interactions.Record{}, err
	}
	if v.Status == interactions.StatusExpired && v.Record.Status == interactions.StatusPending {
		res, err := p.res.Expire(ctx, key)
		if err == nil {
			return res.Record, nil
		}
		if !closedAlready(err) {
			return interactions.Record{}, err
		}
		if v, err = p.res.Lookup(ctx, key); err != nil {
			return interactions.Record{}, err
		}
	}
	if !v.Record.Status.Terminal() {
		return v.Record, ErrCardOpen
	}
	return v.Record, nil
}

// appendClosed appends card_closed for rec unless this turn did. p.mu is
// held.
func (p *Producer) appendClosed(ctx context.Context, rec interactions.Record) error {
	id := rec.Key.CorrelationID
	if p.cards[id] == cardClosed {
		return nil
	}
	ev := &chatprotocol.CardClosedEvent{CorrelationID: id, Outcome: string(rec.Status)}
	return p.put(ctx, p.envelope(p.latest+1, ev))
}

// prunedStart is the refusal of a call that needs the turn's start, which
// the window no longer retains.
func prunedStart() error {
	return refusal.New(refusal.CodeStaleCursor, "", "the window no longer retains the turn's start: its tool calls and cards are unknown")
}
