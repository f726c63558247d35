package conversation

import "encoding/json"

// History is a conversation and its turns in start order, as
// [Store.History] reads them (docs/contract.md section 20.3). The running
// turn, when there is one, is the last and has no State: its frames are in
// the replay window.
type History struct {
	Conversation Conversation
	Turns        []Turn
}

// StateJSON returns the version-1 state's JSON form (docs/contract.md
// section 7.1) of the conversation's ended turns, in order:
//
//	{"schemaVersion":1,"conversationId":…,"turns":[<each ended turn's stored state>],"openCards":[]}
//
// Each turn is its stored bytes as they were written. The form carries no
// open cards, session, capabilities or host state: those are the replay
// window's, and a card still open is the card store's (section 13.2). Like
// every state's JSON form it is written, never read back (section 7.5).
func (h History) StateJSON() []byte {
	n := 96 + len(h.Conversation.ID)
	for _, t := range h.Turns {
		n += len(t.State) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"schemaVersion":1,"conversationId":`...)
	id, _ := json.Marshal(h.Conversation.ID) // a string always encodes
	b = append(b, id...)
	b = append(b, `,"turns":[`...)
	first := true
	for _, t := range h.Turns {
		if !t.Ended() {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, t.State...)
	}
	return append(b, `],"openCards":[]}`...)
}

// Upto returns the history as it was when turnID started: its turns up to
// turnID, which comes last without its state, as a running turn; the
// whole history when turnID is none of its turns. The turns are shared
// with h.
func (h History) Upto(turnID string) History {
	for i, t := range h.Turns {
		if t.ID == turnID {
			turns := append(h.Turns[:i:i], Turn{ID: t.ID, Position: t.Position, UserText: t.UserText})
			return History{Conversation: h.Conversation, Turns: turns}
		}
	}
	return h
}
