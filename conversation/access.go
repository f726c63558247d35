package conversation

import (
	"context"
	"net/http"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Action is what a caller asks to do with a conversation (docs/contract.md
// section 20.2).
type Action string

// The actions the module's endpoints ask [Access.Allow] for.
const (
	// ActionRead: read a turn's stream, resume a chat's running turn, load
	// the history.
	ActionRead Action = "read"
	// ActionStart: start a turn.
	ActionStart Action = "start"
	// ActionCancel: stop the running turn.
	ActionCancel Action = "cancel"
	// ActionRun: run a turn's work in recovery (start, execute, finish,
	// reconcile), which the producer does in the caller's name.
	ActionRun Action = "run"
	// ActionAnswer: answer a card of the conversation, which the card
	// store asks through [Gate.CardAuthority].
	ActionAnswer Action = "answer"
)

// Access is the host's one access rule, written once (docs/contract.md
// section 20.2); [Gate] derives every endpoint's hook from it.
type Access interface {
	// Caller returns the principal the host authenticated for r, from its
	// own session (a cookie, a bearer token), never from the body. An
	// error means no session.
	Caller(r *http.Request) (Principal, error)
	// Allow returns nil when caller may do action to c, read from the
	// store just before, and an error otherwise; any error refuses. It
	// must read current grants, never a cached one, and be safe for
	// concurrent use.
	Allow(ctx context.Context, caller Principal, c Conversation, action Action) error
}

// OwnerOnly is the [Access] that lets a conversation's owner do every
// action and nobody else anything, with the host's session lookup for
// Caller.
type OwnerOnly func(r *http.Request) (Principal, error)

var _ Access = OwnerOnly(nil)

// Caller calls f.
func (f OwnerOnly) Caller(r *http.Request) (Principal, error) { return f(r) }

// Allow returns nil when caller is c's owner, an unauthorized refusal
// otherwise.
func (OwnerOnly) Allow(_ context.Context, caller Principal, c Conversation, _ Action) error {
	if caller != c.Owner {
		return refusal.New(refusal.CodeUnauthorized, "", "conversation: the caller does not own the conversation")
	}
	return nil
}
