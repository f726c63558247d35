package conversation_test

import (
	"context"
	"testing"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/conversation/conversationtest"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
)

func TestMemoryStoreConforms(t *testing.T) {
	conversationtest.TestStore(t, conversationtest.Config{NewSubject: func(context.Context) (conversationtest.Subject, error) {
		return conversationtest.Subject{Store: conversation.NewMemoryStore()}, nil
	}})
}

// A restarted process's memory store never hands out a turn id of the
// process before it: the ids carry no counter.
func TestMemoryStoreTurnIDsSurviveARestart(t *testing.T) {
	seen := map[string]bool{}
	for range 50 {
		s := conversation.NewMemoryStore() // a restart: the same conversation id, a fresh store
		c, err := s.Create(t.Context(), "c1", conversation.Principal{ID: "u"})
		if err != nil {
			t.Fatal(err)
		}
		tu, _, err := s.StartTurn(t.Context(), c.ID, conversation.TurnStart{UserText: "q"})
		if err != nil {
			t.Fatal(err)
		}
		if seen[tu.ID] || tu.Position != 1 {
			t.Fatalf("turn %+v: its id was allocated before", tu)
		}
		seen[tu.ID] = true
	}
}
