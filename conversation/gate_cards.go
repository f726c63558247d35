package conversation

import (
	"context"
	"time"

	"github.com/Papercusp/chat-protocol-go/interactions"
)

// CardAuthority is the card store's authority from the one rule
// (docs/contract.md sections 13.2 and 20.2): caller, a card caller as
// [Gate.CardCaller] makes it, acts in conversation id when the rule lets
// its principal [ActionAnswer] there, scoped to that conversation and
// caller; an unknown conversation or a denial is no authority (inactive)
// and nil. A store failure is its error. pgstore's AuthorityFunc calls it
// with its transaction's ctx.
func (g *Gate) CardAuthority(ctx context.Context, caller interactions.Caller, id string) (interactions.Authority, error) {
	c, err := g.Store.Get(ctx, id)
	if err == nil {
		err = g.Access.Allow(ctx, Principal{ID: caller.Principal, Tenant: caller.Tenant}, c, ActionAnswer)
	}
	switch {
	case err == nil:
		return interactions.Authority{Active: true, Scope: interactions.Scope{Conversation: id, Caller: caller}}, nil
	case storeFailure(err):
		return interactions.Authority{}, err
	}
	return interactions.Authority{}, nil
}

// CardAuthorityFunc returns [Gate.CardAuthority] as the in-memory card
// store's [interactions.AuthorityFunc], each call bounded by 5 s; a store
// failure is no authority.
func (g *Gate) CardAuthorityFunc() interactions.AuthorityFunc {
	return func(caller interactions.Caller, id string) interactions.Authority {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		a, _ := g.CardAuthority(ctx, caller, id) // a failure is inactive: nothing is granted
		return a
	}
}
