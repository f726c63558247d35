package conversation_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// keeps is a store declaring c.
type keeps struct {
	recovery.Store
	c chatprotocol.ChatCapabilities
}

func (k keeps) Capabilities() chatprotocol.ChatCapabilities { return k.c }

// durableWindow is a window declaring what a database's does.
type durableWindow struct{ replay.Window }

func (durableWindow) Capabilities() chatprotocol.ChatCapabilities {
	return chatprotocol.ChatCapabilities{ConnectionReplay: true, PersistedHistory: true}
}

func TestCapabilitiesComeFromTheStoresThatKeepThem(t *testing.T) {
	memory := conversation.Stores{Window: replay.NewMemory(nil), Conversations: conversation.NewMemoryStore(),
		Recovery: recovery.NewMemoryStore(nil), Cards: interactions.NewMemoryStore(nil, nil), ResumesInterrupted: true}
	assert.Equal(t, chatprotocol.ChatCapabilities{ConnectionReplay: true}, conversation.Capabilities(memory),
		"the lightweight profile: nothing survives a restart, whatever the host resumes")
	assert.Equal(t, chatprotocol.ChatCapabilities{}, conversation.Capabilities(conversation.Stores{}))

	all := chatprotocol.ChatCapabilities{ConnectionReplay: true, PersistedHistory: true, PersistedDecisions: true,
		CompletedToolCheckpoints: true, InterruptedTurnRecovery: true}
	durable := keeps{recovery.NewMemoryStore(nil), chatprotocol.ChatCapabilities{CompletedToolCheckpoints: true, InterruptedTurnRecovery: true}}
	s := memory
	s.Recovery = durable
	assert.Equal(t, chatprotocol.ChatCapabilities{ConnectionReplay: true, CompletedToolCheckpoints: true}, conversation.Capabilities(s),
		"a durable recovery store on a memory window: no turn to resume")
	s.Window = durableWindow{replay.NewMemory(nil)}
	assert.Equal(t, chatprotocol.ChatCapabilities{ConnectionReplay: true, CompletedToolCheckpoints: true, InterruptedTurnRecovery: true},
		conversation.Capabilities(s), "the window's persistedHistory is its frames, not the host's history")
	s.ResumesInterrupted = false
	assert.False(t, conversation.Capabilities(s).InterruptedTurnRecovery, "the stores alone resume nothing")
	s.ResumesInterrupted = true
	s.Conversations = struct {
		conversation.Store
		keeps
	}{conversation.NewMemoryStore(), keeps{c: chatprotocol.ChatCapabilities{PersistedHistory: true, PersistedDecisions: true}}}
	got := conversation.Capabilities(s)
	assert.True(t, got.PersistedHistory)
	assert.False(t, got.PersistedDecisions, "each capability from its own store")
	s.Cards = struct {
		interactions.Store
		keeps
	}{interactions.NewMemoryStore(nil, nil), keeps{c: chatprotocol.ChatCapabilities{PersistedDecisions: true}}}
	assert.Equal(t, all, conversation.Capabilities(s))
}
