package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/conversation/conversationtest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// conversationSubject returns conversationtest's constructor of stores at
// session isolation iso, each on a pool of its own.
func conversationSubject(iso pgx.TxIsoLevel) func(ctx context.Context) (conversationtest.Subject, error) {
	return func(ctx context.Context) (conversationtest.Subject, error) {
		c := &closers{}
		pool, err := c.pool(ctx, poolOpts{iso: iso, maxConns: 8})
		if err != nil {
			return conversationtest.Subject{}, err
		}
		s, err := NewConversationStore(pool, nil)
		if err != nil {
			c.close()
			return conversationtest.Subject{}, err
		}
		return conversationtest.Subject{Store: s, Close: c.close}, nil
	}
}

// TestConversationStoreConformance runs conversationtest.TestStore at both
// isolation levels (docs/contract.md section 20.1).
func TestConversationStoreConformance(t *testing.T) {
	needDB(t)
	for _, iso := range []pgx.TxIsoLevel{pgx.ReadCommitted, pgx.Serializable} {
		t.Run(string(iso), func(t *testing.T) {
			conversationtest.TestStore(t, conversationtest.Config{NewSubject: conversationSubject(iso)})
		})
	}
}

// Sixteen starts of one conversation on sixteen connections, many rounds:
// exactly one wins each round, the others are refused turn-running.
func TestConversationConcurrentStarts(t *testing.T) {
	for _, iso := range []pgx.TxIsoLevel{pgx.ReadCommitted, pgx.Serializable} {
		t.Run(string(iso), func(t *testing.T) {
			ctx := t.Context()
			s, err := NewConversationStore(newPool(t, poolOpts{iso: iso, maxConns: 16}), nil)
			require.NoError(t, err)
			c, err := s.Create(ctx, "", conversation.Principal{ID: "u"})
			require.NoError(t, err)
			for round := range 20 {
				var (
					wg            sync.WaitGroup
					won, refusedN int
					mu            sync.Mutex
					other         []error
					winner        conversation.Turn
				)
				for i := range 16 {
					wg.Go(func() {
						tu, _, err := s.StartTurn(ctx, c.ID, conversation.TurnStart{UserText: fmt.Sprint(round, i)})
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err == nil:
							won++
							winner = tu
						case errors.Is(err, refusal.ErrTurnRunning):
							refusedN++
						default:
							other = append(other, err)
						}
					})
				}
				wg.Wait()
				require.Empty(t, other)
				require.Equal(t, 1, won, "round %d", round)
				require.Equal(t, 15, refusedN, "round %d", round)
				require.Equal(t, round+1, winner.Position)
				require.NoError(t, s.EndTurn(ctx, c.ID, winner.ID, []byte(`{}`)))
			}
		})
	}
}
