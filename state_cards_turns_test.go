package chatprotocol

import (
	"testing"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A card asked by a turn that has ended is closed by the turn that carries
// the conversation on (docs/contract.md section 13.2): its card_closed, in
// a later turn, removes the card from openCards whatever the outcome, while
// the same card_closed in the ended asking turn is turn-terminated.
func TestCardClosedByALaterTurn(t *testing.T) {
	for _, outcome := range []string{"answered", "declined", "cancelled", "expired", "superseded"} {
		t.Run(outcome, func(t *testing.T) {
			s := NewChatStateV1("c-1")
			env := func(turn string, seq int64, ev Event) ChatEventEnvelope {
				return ChatEventEnvelope{ConversationID: "c-1", TurnID: turn, EventID: turn + ":" + itoa(int(seq)), Seq: seq, Event: ev}
			}
			closed := &CardClosedEvent{CorrelationID: "k-1", Outcome: outcome}
			for _, e := range []ChatEventEnvelope{
				env("t-1", 1, &LifecycleEvent{Status: LifecycleStarted}),
				env("t-1", 2, openCard("k-1", 1)),
				env("t-1", 3, openCard("k-2", 2)),
				env("t-1", 4, &LifecycleEvent{Status: LifecycleCompleted}),
			} {
				require.NoError(t, s.Apply(e))
			}
			assert.ErrorIs(t, s.Apply(env("t-1", 5, closed)), refusal.ErrTurnTerminated)
			assert.Equal(t, []string{"k-1", "k-2"}, openCardIDs(s))

			require.NoError(t, s.Apply(env("t-2", 1, &LifecycleEvent{Status: LifecycleStarted})))
			require.NoError(t, s.Apply(env("t-2", 2, closed)))
			assert.Equal(t, []string{"k-2"}, openCardIDs(s))
			assert.Equal(t, []string{"k-2"}, jsonCardIDs(t, s))
			_, open := s.OpenCard("k-1")
			assert.False(t, open)
		})
	}
}
