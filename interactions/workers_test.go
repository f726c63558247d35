package interactions_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Fresh workers over the same fake database recover pending and terminal
// records: nothing a worker knows lives outside the store.
func TestFreshWorkersRecover(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	keys := map[string]interactions.Key{}
	for _, id := range []string{"answered", "cancelled", "crashed", "pending"} {
		keys[id] = interactions.Key{Conversation: conv, CorrelationID: id}
		_, err := e.res.Open(ctx, interactions.NewCard{Key: keys[id], Answerer: alice, Spec: radioSpec(false), Schema: radioV1})
		require.NoError(t, err)
	}
	sub := func(id, key string) interactions.Submission {
		s := submit(id, "a")
		s.Response.CorrelationID = keys[key].CorrelationID
		return s
	}
	_, err := e.res.Answer(ctx, alice, keys["answered"], sub("s-1", "answered"))
	require.NoError(t, err)
	_, err = e.res.Cancel(ctx, keys["cancelled"], "turn cancelled")
	require.NoError(t, err)
	// The first worker dies right after committing, before it hears back.
	e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpTransact, Fault: interactionstest.FaultLostAckCommitted,
		Then: func() {
			e.store.Inject(interactionstest.Failpoint{Op: interactionstest.OpRead, Fault: interactionstest.FaultUnavailable})
		}})
	_, err = e.res.Answer(ctx, alice, keys["crashed"], sub("s-2", "crashed"))
	require.ErrorIs(t, err, refusal.ErrNeedsReconciliation)
	before := map[string]interactions.Record{}
	for id, k := range keys {
		v, err := e.res.Lookup(ctx, k)
		require.NoError(t, err)
		before[id] = v.Record
	}

	for range 3 {
		_, fresh := e.worker()
		for id, k := range keys {
			v, err := fresh.Read(ctx, alice, k)
			require.NoError(t, err, id)
			assert.Equal(t, before[id], v.Record, id)
			_, err = fresh.Read(ctx, bob, k)
			require.ErrorIs(t, err, refusal.ErrCardNotFound, "authority is rechecked on every read")
		}
	}
	assert.Equal(t, interactions.StatusPending, before["pending"].Status)
	assert.Equal(t, interactions.StatusAnswered, before["crashed"].Status)

	// A fresh worker answers the pending card, and tells the client that
	// retries its crashed request what was stored.
	_, fresh := e.worker()
	_, err = fresh.Answer(ctx, alice, keys["pending"], sub("s-3", "pending"))
	require.NoError(t, err)
	res, err := fresh.Answer(ctx, alice, keys["crashed"], sub("s-2", "crashed"))
	require.ErrorIs(t, err, refusal.ErrDuplicateAnswer)
	assert.Equal(t, before["crashed"], res.Record)
	// Reads never advanced anything: each card has its open and its one
	// closing version.
	for id, k := range keys {
		assert.Len(t, e.db.History(k), 2, id)
	}
}
