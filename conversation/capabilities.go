package conversation

import (
	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// Declarer is a store that tells which capabilities (docs/contract.md
// section 8) what it keeps gives a host: a replay window, pgstore's stores.
// A store without the method keeps nothing across a restart, as the
// in-memory ones.
type Declarer interface {
	Capabilities() chatprotocol.ChatCapabilities
}

// Stores are a host's stores, as [Capabilities] reads them; a nil one
// keeps nothing.
type Stores struct {
	Window        replay.Window
	Conversations Store
	Recovery      recovery.Store
	Cards         interactions.Store
	// ResumesInterrupted is set by a host that, once restarted, resumes
	// the turns a restart interrupted, from the window and recovery; the
	// stores alone resume nothing.
	ResumesInterrupted bool
}

// Capabilities returns what a host on s may declare (docs/contract.md
// sections 8 and 20.5), each capability from the store that keeps it, as
// that store's [Declarer] says: connectionReplay from the window,
// persistedHistory from the conversation store, persistedDecisions from
// the card store, completedToolCheckpoints from the recovery store, and
// interruptedTurnRecovery only when ResumesInterrupted is set and the
// recovery store and the window both keep it (the window's
// persistedHistory: its frames outlive a restart).
func Capabilities(s Stores) chatprotocol.ChatCapabilities {
	w, c, r, k := declared(s.Window), declared(s.Conversations), declared(s.Recovery), declared(s.Cards)
	return chatprotocol.ChatCapabilities{
		ConnectionReplay:         w.ConnectionReplay,
		PersistedHistory:         c.PersistedHistory,
		PersistedDecisions:       k.PersistedDecisions,
		CompletedToolCheckpoints: r.CompletedToolCheckpoints,
		InterruptedTurnRecovery:  s.ResumesInterrupted && r.InterruptedTurnRecovery && w.PersistedHistory,
	}
}

// declared is x's declaration, none when x does not declare.
func declared(x any) chatprotocol.ChatCapabilities {
	if d, ok := x.(Declarer); ok {
		return d.Capabilities()
	}
	return chatprotocol.ChatCapabilities{}
}
