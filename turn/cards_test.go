package turn_test

import (
	"encoding/json"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// cardKey is the key of correlation id in the conversation.
func cardKey(id string) interactions.Key {
	return interactions.Key{Conversation: conversation, CorrelationID: id}
}

// A turn asks a card and ends; the person answers, declines or cancels, or
// the card expires; the waiting host wakes without polling and the next
// turn, which carries the conversation on, closes the card right after its
// start, so that the client's openCards is right after every outcome
// (docs/contract.md section 13.2).
func TestCardClosedByTheNextTurn(t *testing.T) {
	for _, tc := range []struct {
		outcome interactions.Status
		close   func(h *host)
	}{
		{interactions.StatusAnswered, func(h *host) { answer(h, cards.CardActionSubmit) }},
		{interactions.StatusDeclined, func(h *host) { answer(h, cards.CardActionDecline) }},
		{interactions.StatusCancelled, func(h *host) { answer(h, cards.CardActionCancel) }},
		{interactions.StatusExpired, func(h *host) { // the deadline passes and a sweeper stores it
			h.clock.Advance(time.Minute)
			_, err := h.cards.Expire(h.t.Context(), cardKey("k-1"))
			require.NoError(h.t, err)
		}},
	} {
		t.Run(string(tc.outcome), func(t *testing.T) {
			ctx := t.Context()
			h := newHost(t)
			p1 := h.start("t-1")
			require.NoError(t, p1.Delta(ctx, "One question. "))
			rec, err := p1.Ask(ctx, helpfulCard("k-1"))
			require.NoError(t, err)
			require.NoError(t, p1.Complete(ctx))

			envs := h.envelopes("t-1")
			require.Equal(t, []string{"lifecycle", "delta", "card", "lifecycle"}, types(envs))
			card := envs[2].Event.(*chatprotocol.CardEvent).Card
			assert.Equal(t, rec.Snapshot(`{"type":"object","properties":{"optionId":{"enum":["yes","no"]}},"required":["optionId"]}`), card)
			assert.Equal(t, epoch.UnixMilli(), card.CreatedAt)
			assert.Len(t, h.state("t-1").OpenCards(), 1)

			woken := make(chan interactions.View, 1)
			go func() {
				v, err := h.cards.Wait(ctx, cardKey("k-1"))
				assert.NoError(t, err)
				woken <- v
			}()
			tc.close(h)
			var v interactions.View
			select {
			case v = <-woken:
			case <-time.After(5 * time.Second):
				t.Fatal("the host was not woken")
			}
			p2 := h.start("t-2")
			closed, err := p2.CloseCard(ctx, "k-1")
			require.NoError(t, err)
			assert.Equal(t, tc.outcome, closed.Status)
			assert.Equal(t, v.Record.Key, closed.Key)
			_, err = p2.CloseCard(ctx, "k-1")
			require.NoError(t, err, "closing again appends nothing")
			require.NoError(t, p2.Complete(ctx))

			envs = h.envelopes("t-2")
			require.Equal(t, []string{"lifecycle", "card_closed", "lifecycle"}, types(envs))
			assert.Equal(t, &chatprotocol.CardClosedEvent{CorrelationID: "k-1", Outcome: string(tc.outcome)}, envs[1].Event)
			assert.Empty(t, h.state("t-1", "t-2").OpenCards())
			stored, err := h.cards.Lookup(ctx, cardKey("k-1"))
			require.NoError(t, err)
			assert.Equal(t, tc.outcome, stored.Record.Status)
		})
	}
}

// A card whose deadline passed with nobody storing it is expired by the
// turn that closes it.
func TestCloseCardStoresTheExpiry(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p1 := h.start("t-1")
	_, err := p1.Ask(ctx, helpfulCard("k-1"))
	require.NoError(t, err)
	require.NoError(t, p1.Complete(ctx))
	h.clock.Advance(time.Minute)
	v, err := h.cards.Wait(ctx, cardKey("k-1"))
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusExpired, v.Status)
	assert.Equal(t, interactions.StatusPending, v.Record.Status)

	p2 := h.start("t-2")
	rec, err := p2.CloseCard(ctx, "k-1")
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusExpired, rec.Status)
	stored, err := h.cards.Lookup(ctx, cardKey("k-1"))
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusExpired, stored.Record.Status)
	assert.Empty(t, h.state("t-1", "t-2").OpenCards())
}

// answer is the person's response to k-1.
func answer(h *host, action cards.CardAction) {
	resp := cards.CardResponse{Action: action, CorrelationID: "k-1"}
	if action == cards.CardActionSubmit {
		resp.Value = json.RawMessage(`{"optionId":"yes"}`)
	}
	_, err := h.cards.Answer(h.t.Context(), person, cardKey("k-1"), interactions.Submission{ID: "s-1", Response: resp})
	require.NoError(h.t, err)
}

// While the asking turn runs, it closes its card itself; a card still
// pending is not closed.
func TestCardClosedByTheAskingTurn(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	_, err := p.Ask(ctx, helpfulCard("k-1"))
	require.NoError(t, err)
	_, err = p.CloseCard(ctx, "k-1")
	require.ErrorIs(t, err, turn.ErrCardOpen)
	answer(h, cards.CardActionSubmit)
	v, err := h.cards.Wait(ctx, cardKey("k-1"))
	require.NoError(t, err)
	assert.Equal(t, `{"optionId":"yes"}`, string(v.Record.Answer.Value))
	_, err = p.CloseCard(ctx, "k-1")
	require.NoError(t, err)
	require.NoError(t, p.Delta(ctx, "Thanks."))
	require.NoError(t, p.Complete(ctx))
	assert.Equal(t, []string{"lifecycle", "card", "card_closed", "delta", "lifecycle"}, types(h.envelopes("t-1")))
	assert.Empty(t, h.state("t-1").OpenCards())
}

// A cancelled turn withdraws the cards it left open: cancelled in the
// store and closed on its stream before lifecycle cancelled; CancelCard
// does the same for one card while the turn runs.
func TestCancelledTurnClosesItsCards(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	_, err := p.Ask(ctx, helpfulCard("k-1"))
	require.NoError(t, err)
	_, err = p.Ask(ctx, helpfulCard("k-2"))
	require.NoError(t, err)
	rec, err := p.CancelCard(ctx, "k-2", "no longer needed")
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusCancelled, rec.Status)
	require.NoError(t, h.rec.Cancel(ctx, alice, refOf("t-1")))
	require.NoError(t, p.End(p.Context(), p.Context().Err()))

	envs := h.envelopes("t-1")
	assert.Equal(t, []string{"lifecycle", "card", "card", "card_closed", "card_closed", "lifecycle"}, types(envs))
	assert.Equal(t, &chatprotocol.CardClosedEvent{CorrelationID: "k-1", Outcome: "cancelled"}, envs[4].Event)
	assert.Equal(t, chatprotocol.LifecycleCancelled, envs[5].Event.(*chatprotocol.LifecycleEvent).Status)
	assert.Empty(t, h.state("t-1").OpenCards())
	v, err := h.cards.Lookup(ctx, cardKey("k-1"))
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusCancelled, v.Status)
}

// A resumed turn asking a card already on its stream appends nothing; a
// card opened before a crash but never shown is shown.
func TestAskAfterRestart(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p1 := h.start("t-1")
	_, err := p1.Ask(ctx, helpfulCard("k-1"))
	require.NoError(t, err)
	_, err = h.cards.Open(ctx, interactions.NewCard{Key: cardKey("k-2"), Answerer: person, Schema: helpful,
		Spec: helpfulCard("k-2").Spec}) // the crash came before its card event
	require.NoError(t, err)

	p2 := h.start("t-1")
	_, err = p2.Ask(ctx, helpfulCard("k-1"))
	require.NoError(t, err)
	_, err = p2.Ask(ctx, helpfulCard("k-2"))
	require.NoError(t, err)
	assert.Equal(t, []string{"lifecycle", "card", "card"}, types(h.envelopes("t-1")))
	_, err = p2.Ask(ctx, interactions.NewCard{Key: interactions.Key{Conversation: "c-9", CorrelationID: "k-3"}})
	assert.ErrorIs(t, err, refusal.ErrInvalidCard)
	assert.Len(t, h.state("t-1").OpenCards(), 2)
}
