package chatprotocol

import "github.com/Papercusp/chat-protocol-go/cards"

// openCards is the set of open cards of a ChatStateV1 (docs/contract.md
// sections 3 and 7), in the order they were first opened. Opening,
// replacing and closing a card cost O(1) amortised whatever the number of
// open cards: list keeps the cards in order and index finds a card's
// place; a closed card leaves an empty slot (a card always has a
// correlation id, so the zero cards.OpenCardSnapshot marks one) that compact
// removes once the slots are mostly empty.
//
// The zero openCards is empty.
type openCards struct {
	list   []cards.OpenCardSnapshot
	index  map[string]int // correlation id → its place in list
	closed int            // empty slots in list
}

// put opens card, or replaces the open card of the same correlation id in
// place (the STATE channel: last write wins).
func (o *openCards) put(card cards.OpenCardSnapshot) {
	if i, ok := o.index[card.CorrelationID]; ok {
		o.list[i] = card
		return
	}
	if o.index == nil {
		o.index = make(map[string]int)
	}
	o.index[card.CorrelationID] = len(o.list)
	o.list = append(o.list, card)
}

// close removes the card of correlationID, if it is open.
func (o *openCards) close(correlationID string) {
	i, ok := o.index[correlationID]
	if !ok {
		return
	}
	delete(o.index, correlationID)
	o.list[i] = cards.OpenCardSnapshot{}
	o.closed++
	if o.closed > len(o.list)/2 {
		o.compact()
	}
}

// compact drops the empty slots of list, keeping the order, and renumbers
// index. It runs when more than half the slots are empty, so its cost is
// paid for by the closes that emptied them.
func (o *openCards) compact() {
	kept := o.list[:0]
	for _, c := range o.list {
		if c.CorrelationID != "" {
			o.index[c.CorrelationID] = len(kept)
			kept = append(kept, c)
		}
	}
	clear(o.list[len(kept):]) // let the closed cards be collected
	o.list, o.closed = kept, 0
}

// len returns the number of open cards.
func (o *openCards) len() int { return len(o.list) - o.closed }

// all calls yield with each open card in opening order, and its place
// among the open cards, from 0.
func (o *openCards) all(yield func(i int, c *cards.OpenCardSnapshot)) {
	i := 0
	for k := range o.list {
		if o.list[k].CorrelationID != "" {
			yield(i, &o.list[k])
			i++
		}
	}
}

// clone returns a copy that shares no slice or map with o.
func (o *openCards) clone() openCards {
	c := openCards{list: make([]cards.OpenCardSnapshot, 0, o.len())}
	if o.len() > 0 {
		c.index = make(map[string]int, o.len())
	}
	o.all(func(i int, card *cards.OpenCardSnapshot) {
		c.index[card.CorrelationID] = i
		c.list = append(c.list, *card)
	})
	return c
}

// OpenCards returns the open cards in the order they were first opened
// (docs/contract.md section 7, "openCards"): a card event for an open card
// replaces it in place (STATE channel, last write wins) and card_closed
// removes it; a card closed and opened again goes to the end. The slice is
// new on each call (O(n) in the number of open cards) and the caller may
// keep and modify it; its cards share their nested values (presentation,
// options, report) with the state, which does not modify them.
func (s *ChatStateV1) OpenCards() []cards.OpenCardSnapshot {
	out := make([]cards.OpenCardSnapshot, 0, s.cards.len())
	s.cards.all(func(_ int, c *cards.OpenCardSnapshot) { out = append(out, *c) })
	return out
}

// OpenCard returns the open card of correlationID, and whether it is open,
// in O(1).
func (s *ChatStateV1) OpenCard(correlationID string) (cards.OpenCardSnapshot, bool) {
	i, ok := s.cards.index[correlationID]
	if !ok {
		return cards.OpenCardSnapshot{}, false
	}
	return s.cards.list[i], true
}
