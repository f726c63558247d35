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
