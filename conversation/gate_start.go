package conversation

import (
	"context"
	"errors"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// StartTurn starts a turn of conversationID for caller with the user's
// text (docs/contract.md section 20.2): it reads the conversation, asks
// the rule for [ActionStart] and records the turn in the store. With
// create, an unknown conversation is first created under that id, owned by
// caller (a client-chosen chat id, as useChat's); a concurrent create of
// the same id is read back. Every denial is turn-not-found, a store
// failure is as the store said, and a running turn is turn-running.
func (g *Gate) StartTurn(ctx context.Context, caller Principal, conversationID, userText string, create bool) (Conversation, Turn, error) {
	if err := CheckUserText(userText); err != nil {
		return Conversation{}, Turn{}, err
	}
	c, err := g.Store.Get(ctx, conversationID)
	if create && errors.Is(err, refusal.ErrConversationNotFound) {
		c, err = g.Store.Create(ctx, conversationID, caller)
		if errors.Is(err, refusal.ErrConversationExists) {
			c, err = g.Store.Get(ctx, conversationID)
		}
	}
	if err == nil {
		err = g.Access.Allow(ctx, caller, c, ActionStart)
	}
	if err != nil {
		return Conversation{}, Turn{}, verdict(err)
	}
	t, err := g.Store.StartTurn(ctx, c.ID, userText)
	if err != nil {
		return Conversation{}, Turn{}, err
	}
	return c, t, nil
}
