package conversation

import (
	"context"
	"net/http"
)

// ReadHistory returns the history of conversation id for the request's
// caller, whom the rule lets [ActionRead] it (docs/contract.md section
// 20.3). Every denial is turn-not-found, as the Gate's: no session, an
// unknown conversation, a caller the rule refuses; a store failure stays
// as the store said.
func (g *Gate) ReadHistory(ctx context.Context, r *http.Request, id string) (History, error) {
	caller, err := g.Access.Caller(r)
	if err != nil {
		return History{}, denied(err)
	}
	h, err := g.Store.History(ctx, id)
	if err == nil {
		err = g.Access.Allow(ctx, caller, h.Conversation, ActionRead)
	}
	if err != nil {
		return History{}, verdict(err)
	}
	return h, nil
}
