package agent_test

import (
	"encoding/json"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
)

// A call that needs approval opens its card and leaves the turn
// interrupted, the tool not run; once the person answered, the turn is
// resumed (a Producer started on it again, here in another process) and
// Run goes on: an approved call runs, a declined one is answered to the
// model as an error result, and the card closes on the turn's stream.
func TestApprovalCard(t *testing.T) {
	for _, tc := range []struct {
		action  cards.CardAction
		value   string
		runs    int64
		result  agent.Result
		outcome string
	}{
		{cards.CardActionSubmit, `{}`, 1, agent.Result{CallID: "a", Name: "refund",
			Output: json.RawMessage(`{"found":{"q":"order-7"}}`)}, "answered"},
		{cards.CardActionDecline, "", 0, agent.Result{CallID: "a", Name: "refund",
			Output: json.RawMessage(`{"error":"not approved: the card was declined"}`), IsError: true}, "declined"},
	} {
		t.Run(string(tc.action), func(t *testing.T) {
			s := newStores(t)
			var tools counter
			refund := agent.Tool{Spec: agent.ToolSpec{Name: "refund"}, Run: tools.run, Card: confirmCard}
			sc := &script{steps: []stepFunc{
				ask("I can refund it. ", 3, call("a", "refund", "order-7")),
				say("Done.", 4),
			}}
			loop := &agent.Loop{Model: sc.model(), Tools: []agent.Tool{refund}}
			out, err := loop.Run(t.Context(), s.process().mustStart("t-1"), history)
			require.NoError(t, err)
			id := agent.CardID("t-1", "a")
			assert.Equal(t, chatprotocol.LifecycleInterrupted, out.Status)
			assert.Equal(t, []string{id}, out.Cards)
			assert.Zero(t, tools.total.Load())
			require.Len(t, s.state("t-1").OpenCards(), 1)

			s.answerCard(id, tc.action, tc.value)
			out, err = loop.Run(t.Context(), s.process().mustStart("t-1"), history)
			require.NoError(t, err)
			assert.Equal(t, chatprotocol.LifecycleCompleted, out.Status)
			assert.Equal(t, tc.runs, tools.total.Load())
			assert.Equal(t, 2, out.Steps)
			assert.Equal(t, int64(7), *out.Usage.TotalTokens)

			reqs := sc.requests()
			require.Len(t, reqs, 2)
			last := reqs[1].Messages[len(reqs[1].Messages)-1]
			assert.Equal(t, []agent.Result{tc.result}, last.Results)
			envs := s.envelopes("t-1")
			closed := of[*chatprotocol.CardClosedEvent](envs)
			require.Len(t, closed, 1)
			assert.Equal(t, &chatprotocol.CardClosedEvent{CorrelationID: id, Outcome: tc.outcome}, closed[0])
			st := s.state("t-1")
			assert.Empty(t, st.OpenCards())
			assert.Equal(t, "I can refund it. Done.", st.Turns[0].Text())
		})
	}
}

// A turn resumed before the person answered stays interrupted, waiting
// for the same card, and runs nothing.
func TestCardStillOpen(t *testing.T) {
	s := newStores(t)
	var tools counter
	refund := agent.Tool{Spec: agent.ToolSpec{Name: "refund"}, Run: tools.run, Card: confirmCard}
	sc := &script{steps: []stepFunc{ask("", 1, call("a", "refund", "order-7")), say("Done.", 1)}}
	loop := &agent.Loop{Model: sc.model(), Tools: []agent.Tool{refund}}
	for range 2 {
		out, err := loop.Run(t.Context(), s.process().mustStart("t-1"), history)
		require.NoError(t, err)
		assert.Equal(t, chatprotocol.LifecycleInterrupted, out.Status)
		assert.Equal(t, []string{agent.CardID("t-1", "a")}, out.Cards)
	}
	assert.Zero(t, tools.total.Load())
	assert.Len(t, sc.requests(), 1)
	assert.Len(t, of[*chatprotocol.CardEvent](s.envelopes("t-1")), 1)
}

// An ask-the-user tool has no Run: its card's submitted answer is the
// call's output.
func TestAskTheUser(t *testing.T) {
	s := newStores(t)
	askUser := agent.Tool{Spec: agent.ToolSpec{Name: "ask_user"}, Card: questionCard}
	sc := &script{steps: []stepFunc{ask("", 1, call("q1", "ask_user", "which order")), say("Thanks.", 1)}}
	loop := &agent.Loop{Model: sc.model(), Tools: []agent.Tool{askUser}}
	out, err := loop.Run(t.Context(), s.process().mustStart("t-1"), history)
	require.NoError(t, err)
	require.Equal(t, chatprotocol.LifecycleInterrupted, out.Status)

	s.answerCard(agent.CardID("t-1", "q1"), cards.CardActionSubmit, `{"text":"order 7"}`)
	out, err = loop.Run(t.Context(), s.process().mustStart("t-1"), history)
	require.NoError(t, err)
	assert.Equal(t, chatprotocol.LifecycleCompleted, out.Status)
	reqs := sc.requests()
	last := reqs[len(reqs)-1].Messages
	assert.Equal(t, []agent.Result{{CallID: "q1", Name: "ask_user", Output: json.RawMessage(`{"text":"order 7"}`)}},
		last[len(last)-1].Results)
	res := of[*chatprotocol.ToolResultEvent](s.envelopes("t-1"))
	require.Len(t, res, 1)
	assert.JSONEq(t, `{"text":"order 7"}`, string(res[0].Output))
	v, err := s.cards.Lookup(t.Context(), interactions.Key{Conversation: conversation, CorrelationID: agent.CardID("t-1", "q1")})
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusAnswered, v.Record.Status)
}

// A card's correlation id is the turn's and the call's, hashed when too
// long.
func TestCardID(t *testing.T) {
	assert.Equal(t, "t-1/call_1", agent.CardID("t-1", "call_1"))
	long := agent.CardID("t-1", string(make([]byte, 300)))
	assert.Len(t, long, len("call-")+64)
	assert.Equal(t, long, agent.CardID("t-1", string(make([]byte, 300))))
}
