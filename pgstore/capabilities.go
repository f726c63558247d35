package pgstore

import (
	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/conversation"
)

// The stores declare what they keep across a restart, which
// conversation.Capabilities combines into a host's declaration.
var (
	_ conversation.Declarer = (*ConversationStore)(nil)
	_ conversation.Declarer = (*InteractionStore)(nil)
	_ conversation.Declarer = (*RecoveryStore)(nil)
	_ conversation.Declarer = (*Window)(nil)
)

// Capabilities returns what a [ConversationStore] lets a host declare
// (docs/contract.md sections 8 and 20.5): persistedHistory, the
// conversations, their turns and each ended turn's state in the database.
func (s *ConversationStore) Capabilities() chatprotocol.ChatCapabilities {
	return chatprotocol.ChatCapabilities{PersistedHistory: true}
}

// Capabilities returns what an [InteractionStore] lets a host declare
// (docs/contract.md sections 8 and 20.5): persistedDecisions, the cards and
// their answers in the database.
func (s *InteractionStore) Capabilities() chatprotocol.ChatCapabilities {
	return chatprotocol.ChatCapabilities{PersistedDecisions: true}
}

// Capabilities returns what a [RecoveryStore] lets a host declare
// (docs/contract.md sections 8 and 20.5): completedToolCheckpoints, each
// completed call's result in the database, and interruptedTurnRecovery as
// far as the store goes: it keeps what resuming a turn needs, which a
// host declares only when it resumes them ([conversation.Stores]).
func (s *RecoveryStore) Capabilities() chatprotocol.ChatCapabilities {
	return chatprotocol.ChatCapabilities{CompletedToolCheckpoints: true, InterruptedTurnRecovery: true}
}
