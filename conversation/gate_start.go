package conversation

import (
	"context"
	"errors"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// StartTurn starts a turn of conversationID for caller with start
// (docs/contract.md sections 20.1 and 20.2): it reads the conversation,
// asks the rule for [ActionStart] and records the turn in the store
// ([Store.StartTurn]). With create, an unknown conversation is first
// created under that id, owned by caller (a client-chosen chat id, as
// useChat's); a concurrent create of the same id is read back. A start
// whose Key names a turn started before returns that turn with started
// false, once the rule also allows [ActionRead] (the caller reads that
// turn's stream again); the caller then launches nothing. Every denial is
// turn-not-found, a store failure is as the store said, and a running
// turn is turn-running. A seen turn that a [Settling] store refuses
// stale-cursor is told so only to a caller the rule lets read it.
func (g *Gate) StartTurn(ctx context.Context, caller Principal, conversationID string, start TurnStart, create bool) (c Conversation, t Turn, started bool, err error) {
	if err := CheckTurnStart(start); err != nil {
		return Conversation{}, Turn{}, false, err
	}
	c, err = g.Store.Get(ctx, conversationID)
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
		return Conversation{}, Turn{}, false, verdict(err)
	}
	t, started, err = g.Store.StartTurn(ctx, c.ID, start)
	if (err == nil || errors.Is(err, refusal.ErrStaleCursor)) && !started {
		// A turn seen before, even one the window forgot: the rule's read decides.
		if rerr := g.Access.Allow(ctx, caller, c, ActionRead); rerr != nil {
			err = verdict(rerr)
		}
	}
	if err != nil {
		return Conversation{}, Turn{}, false, err
	}
	return c, t, started, nil
}
