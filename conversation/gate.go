package conversation

import (
	"context"
	"net/http"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// Gate derives the hooks of the module's endpoints from one [Store] and
// one [Access] (docs/contract.md section 20.2), so that the ownership rule
// is written once: the version-1 stream's Authorize ([Gate.AuthorizeStream]),
// recovery's Authorizer (the Gate itself), the cancel endpoint's Caller
// ([Gate.CallerString]), the answer endpoint's and the bridges' Caller
// ([Gate.CardCaller]), the card store's authority ([Gate.CardAuthority]),
// and the UI stream's ActiveTurn and Cancel. Each is a plain function
// value a host may wrap or replace; docs/contract.md section 20.2 lists
// the action each endpoint asks for.
//
// Every denial is turn-not-found, whatever denied: no session, an unknown
// conversation or turn, a caller the rule refuses. So an HTTP surface
// answers all of them with the same status, headers and body; a store
// failure stays store-unavailable. Store and Access are required;
// Recovery only for [Gate.Cancel]. A Gate is safe for concurrent use.
type Gate struct {
	Store    Store
	Access   Access
	Recovery *recovery.TurnRecovery
}

var _ recovery.Authorizer = (*Gate)(nil)

// denied is the one refusal of every denial.
func denied(cause error) error {
	return refusal.Wrap(refusal.CodeTurnNotFound, "", "no such turn", cause)
}

// verdict turns a store's or the rule's error into the Gate's answer: a
// store failure as it is, everything else a denial.
func verdict(err error) error {
	if storeFailure(err) {
		return err
	}
	return denied(err)
}

// storeFailure reports whether err is a store's failure rather than a
// denial.
func storeFailure(err error) bool {
	switch refusal.CodeOf(err) {
	case refusal.CodeStoreUnavailable, refusal.CodeNeedsReconciliation, refusal.CodeCheckpointWriteFailed:
		return true
	}
	return false
}

// allowTurn reads the conversation and turn and asks the rule.
func (g *Gate) allowTurn(ctx context.Context, caller Principal, conversationID, turnID string, action Action) error {
	c, _, err := g.Store.Turn(ctx, conversationID, turnID)
	if err == nil {
		err = g.Access.Allow(ctx, caller, c, action)
	}
	if err != nil {
		return verdict(err)
	}
	return nil
}

// AuthorizeStream is the version-1 stream handler's Authorize option: the
// request's caller may read key's turn, which exists in its conversation.
func (g *Gate) AuthorizeStream(r *http.Request, key replay.Key) error {
	caller, err := g.Access.Caller(r)
	if err != nil {
		return denied(err)
	}
	return g.allowTurn(r.Context(), caller, key.ConversationID, key.TurnID, ActionRead)
}

// Authorize implements [recovery.Authorizer]: caller is a
// [Principal.String]; read and cancel ask the rule for [ActionRead] and
// [ActionCancel], the producer's start, execute, finish and reconcile for
// [ActionRun].
func (g *Gate) Authorize(ctx context.Context, caller string, turn recovery.TurnRef, action recovery.Action) error {
	p, err := ParsePrincipal(caller)
	if err != nil {
		return err
	}
	a := ActionRun
	switch action {
	case recovery.ActionRead:
		a = ActionRead
	case recovery.ActionCancel:
		a = ActionCancel
	}
	return g.allowTurn(ctx, p, turn.Conversation, turn.Turn, a)
}

// CallerString is the cancel endpoint's Caller option: the request's caller
// as recovery's caller string ([Principal.String]).
func (g *Gate) CallerString(r *http.Request) (string, error) {
	p, err := g.Access.Caller(r)
	if err != nil {
		return "", err
	}
	return p.String(), nil
}

// CardCaller is the Caller option of the answer endpoint and of the
// bridges: the request's caller as a card's answerer, its
// Principal and Tenant. A card the host opens in a conversation binds
// [CardAnswerer] of its owner, so the card store's scope is the same rule.
func (g *Gate) CardCaller(r *http.Request) (interactions.Caller, error) {
	p, err := g.Access.Caller(r)
	if err != nil {
		return interactions.Caller{}, err
	}
	return CardAnswerer(p), nil
}

// CardAnswerer is the card caller of p: its ID as the Principal, its
// Tenant as the Tenant.
func CardAnswerer(p Principal) interactions.Caller {
	return interactions.Caller{Principal: p.ID, Tenant: p.Tenant}
}

// ActiveTurn is the UI stream bridge's ActiveTurn option: the chat's running
// turn, for a caller the rule lets read the conversation; ok false when it
// has none. A denial is turn-not-found, which the bridge answers as a chat
// without a running turn.
func (g *Gate) ActiveTurn(ctx context.Context, r *http.Request, chatID string) (replay.Key, bool, error) {
	caller, err := g.Access.Caller(r)
	if err != nil {
		return replay.Key{}, false, denied(err)
	}
	c, err := g.Store.Get(ctx, chatID)
	if err == nil {
		err = g.Access.Allow(ctx, caller, c, ActionRead)
	}
	if err != nil {
		return replay.Key{}, false, verdict(err)
	}
	if c.Running == "" {
		return replay.Key{}, false, nil
	}
	return replay.Key{ConversationID: c.ID, TurnID: c.Running}, true, nil
}

// Cancel is the UI stream bridge's Cancel option: it cancels key's turn in
// recovery in the request caller's name, which recovery authorizes through
// the Gate for [ActionCancel]. The producer then ends the turn, and the
// host stores its state ([Store.EndTurn]). Without Recovery it is
// store-unavailable.
func (g *Gate) Cancel(ctx context.Context, r *http.Request, key replay.Key) error {
	if g.Recovery == nil {
		return refusal.New(refusal.CodeStoreUnavailable, "", "conversation: the Gate has no Recovery")
	}
	caller, err := g.CallerString(r)
	if err != nil {
		return denied(err)
	}
	return g.Recovery.Cancel(ctx, caller, recovery.TurnRef{Conversation: key.ConversationID, Turn: key.TurnID})
}
