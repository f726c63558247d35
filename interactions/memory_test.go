package interactions_test

import (
	"context"
	"sync"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// sessions is a host's authorization table as a lightweight host keeps it:
// who may act in which conversation. Its changes run in the store's fence.
type sessions struct {
	store *interactions.MemoryStore
	mu    sync.Mutex
	rows  map[interactions.Caller]map[string]bool
}

func newSessions(opts *interactions.MemoryStoreOptions) *sessions {
	s := &sessions{rows: map[interactions.Caller]map[string]bool{}}
	s.store = interactions.NewMemoryStore(s.authority, opts)
	return s
}

func (s *sessions) authority(c interactions.Caller, conversation string) interactions.Authority {
	s.mu.Lock()
	defer s.mu.Unlock()
	convs, ok := s.rows[c]
	if !ok {
		return interactions.Authority{}
	}
	a := interactions.Authority{Active: true, Scope: interactions.Scope{Caller: c}}
	if convs[conversation] {
		a.Scope.Conversation = conversation
	}
	return a
}

func (s *sessions) grant(c interactions.Caller, conversation string) {
	s.store.Fence(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.rows[c] == nil {
			s.rows[c] = map[string]bool{}
		}
		s.rows[c][conversation] = true
	})
}

func (s *sessions) revoke(c interactions.Caller, conversation string) {
	s.store.Fence(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.rows[c], conversation)
	})
}

// The in-memory store keeps every promise the conformance kit checks
// (docs/contract.md section 13.2), its authority read through the host's
// function and revoked in its fence.
func TestMemoryStoreConformance(t *testing.T) {
	interactionstest.TestStore(t, interactionstest.Config{NewSubject: func(context.Context) (interactionstest.Subject, error) {
		s := newSessions(nil)
		return interactionstest.Subject{
			Open: func() (interactions.Store, error) { return s.store, nil },
			Grant: func(_ context.Context, c interactions.Caller, conversation string) error {
				s.grant(c, conversation)
				return nil
			},
			Revoke: func(_ context.Context, c interactions.Caller, conversation string) error {
				s.revoke(c, conversation)
				return nil
			},
			Transitions: func(_ context.Context, key interactions.Key) ([]interactions.Transition, error) {
				return s.store.Transitions(key), nil
			},
		}, nil
	}})
}

// Beyond MaxClosedCards the card that closed first is forgotten; pending
// cards stay whatever their number.
func TestMemoryStoreForgetsTheOldestClosedCard(t *testing.T) {
	ctx := t.Context()
	s := newSessions(&interactions.MemoryStoreOptions{MaxClosedCards: 1})
	res, err := interactions.New(s.store, jsonschema.NewRegistry(), &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	key := func(id string) interactions.Key { return interactions.Key{Conversation: "c-1", CorrelationID: id} }
	for _, id := range []string{"a", "b", "c"} {
		_, err := res.Open(ctx, interactions.NewCard{Key: key(id), Answerer: interactions.Caller{Principal: "p"},
			Spec: cards.CardSpec{Prompt: "ok?"}, Schema: interactions.SchemaRef{ID: "s", Revision: 1}})
		require.NoError(t, err)
	}
	_, err = res.Cancel(ctx, key("a"), "")
	require.NoError(t, err)
	_, err = res.Cancel(ctx, key("b"), "")
	require.NoError(t, err)
	_, err = res.Lookup(ctx, key("a"))
	assert.ErrorIs(t, err, refusal.ErrCardNotFound)
	v, err := res.Lookup(ctx, key("b"))
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusCancelled, v.Status)
	assert.Len(t, s.store.Transitions(key("b")), 1)
	v, err = res.Lookup(ctx, key("c"))
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusPending, v.Status)
}
