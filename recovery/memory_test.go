package recovery_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The in-memory store keeps every promise of the Store and Admitter seams
// that a store without fault injection can show (docs/contract.md section
// 13.1); a second handle is the same store, as a second worker of the one
// process sees it.
func TestMemoryStoreConformance(t *testing.T) {
	recoverytest.TestStore(t, recoverytest.Config{NewSubject: func(context.Context) (recoverytest.Subject, error) {
		s := recovery.NewMemoryStore(nil)
		return recoverytest.Subject{Store: s, Reopen: func() (recovery.Store, error) { return s, nil }}, nil
	}})
}

// Beyond MaxEndedTurns the turn that ended first is forgotten; running
// turns are kept whatever their number.
func TestMemoryStoreForgetsTheOldestEndedTurn(t *testing.T) {
	ctx := t.Context()
	s := recovery.NewMemoryStore(&recovery.MemoryStoreOptions{MaxEndedTurns: 2})
	turn := func(i int) recovery.TurnRef { return recovery.TurnRef{Conversation: "c", Turn: string(rune('a' + i))} }
	for i := range 5 {
		require.NoError(t, s.CreateTurn(ctx, recovery.TurnRecord{Turn: turn(i), Status: recovery.TurnRunning}))
	}
	for i := range 4 {
		_, err := s.EndTurn(ctx, turn(i), recovery.TurnCompleted)
		require.NoError(t, err)
	}
	for i, kept := range []bool{false, false, true, true, true} {
		rec, err := s.LoadTurn(ctx, turn(i))
		if !kept {
			assert.ErrorIs(t, err, refusal.ErrTurnNotRunning, "turn %d", i)
			continue
		}
		require.NoError(t, err, "turn %d", i)
		assert.Equal(t, turn(i), rec.Turn)
	}
	rec, err := s.LoadTurn(ctx, turn(4))
	require.NoError(t, err)
	assert.Equal(t, recovery.TurnRunning, rec.Status)
}
