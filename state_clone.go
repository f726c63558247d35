package chatprotocol

import "slices"

// Clone returns a copy of s that goes on independently: applying an
// envelope to the copy never changes s, and applying one to s never
// changes the copy, which accepts and refuses exactly what s would (the
// same turns, seqs, calls and open cards, and the same identical-redelivery
// check).
//
// Everything Apply changes or appends to is copied: the turns, each turn's
// text, tool calls, results, provenance, steps and error, the open cards
// and the indexes over them, the capabilities and the state snapshot's
// record. The
// values Apply takes from the envelopes it applies and never modifies are
// shared with s, as they are already shared with those envelopes: JSON
// values (tool inputs and outputs, the snapshot, kept unknown members),
// usage, and the nested parts of result blocks and cards (sources,
// reports, asks, presentations, options). Treat them as read-only.
//
// Clone costs time and memory linear in the size of the state. It only
// reads s, so several goroutines may clone a state that nobody applies to
// at the same time.
func (s *ChatStateV1) Clone() *ChatStateV1 {
	c := &ChatStateV1{
		ConversationID: s.ConversationID,
		SessionID:      s.SessionID,
		cards:          s.cards.clone(),
		seed:           s.seed,
		seeded:         s.seeded,
	}
	if s.Capabilities != nil {
		caps := *s.Capabilities
		c.Capabilities = &caps
	}
	if s.State != nil {
		st := *s.State
		c.State = &st
	}
	if s.Turns != nil {
		c.Turns = make([]*TurnState, len(s.Turns))
		c.turns = make(map[string]*TurnState, len(s.Turns))
	}
	for i, t := range s.Turns {
		ct := t.clone()
		c.Turns[i] = ct
		c.turns[ct.TurnID] = ct
	}
	return c
}

// clone returns a copy of t for ChatStateV1.Clone.
func (t *TurnState) clone() *TurnState {
	c := &TurnState{
		TurnID:     t.TurnID,
		Status:     t.Status,
		LastSeq:    t.LastSeq,
		Results:    slices.Clone(t.Results),
		Provenance: slices.Clone(t.Provenance),
		Steps:      slices.Clone(t.Steps),
		Usage:      t.Usage,
		Reason:     t.Reason,
		digests:    slices.Clone(t.digests),
	}
	if t.Error != nil {
		e := *t.Error
		c.Error = &e
	}
	c.text.Grow(t.text.Len())
	c.text.WriteString(t.text.String())
	if t.ToolCalls != nil {
		c.ToolCalls = make([]*ToolCallState, len(t.ToolCalls))
		c.calls = make(map[string]*ToolCallState, len(t.ToolCalls))
	}
	for i, call := range t.ToolCalls {
		cc := *call
		cc.Blocks = slices.Clone(call.Blocks)
		c.ToolCalls[i] = &cc
		c.calls[cc.CallID] = &cc
	}
	return c
}
