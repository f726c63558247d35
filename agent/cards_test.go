package agent_test

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
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
	v, err := s.cards.Lookup(t.Context(), interactions.Key{Conversation: convID, CorrelationID: agent.CardID("t-1", "q1")})
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

// A turn with an approval card, crashed after each of its appends, across
// all its runs: the first (to the card), and the one after the answer.
// Each crash is followed by a process that resumes the turn and runs the
// loop again, the person answering whenever the turn waits for the card.
// Each time the turn is one consistent turn: the card opened once and
// closed once, every call with one result, no tool launched twice, and the
// approved call run once.
func TestCardTurnRestartAtEveryPoint(t *testing.T) {
	cardScript := func() *script {
		return &script{byResults: true, steps: []stepFunc{
			ask("Checking. ", 1, call("a", "search", "order-7"), call("b", "refund", "order-7")),
			say("Refunded.", 1),
		}}
	}
	// host runs the turn to its end over views of the shared window that die
	// at append crash (counted across the turn's processes), answering the
	// card when the turn waits for it; it returns the appends made.
	host := func(t *testing.T, crash int64) (*stores, *counter, *counter, int64) {
		s := newStores(t)
		var searches, refunds counter
		loop := &agent.Loop{Model: cardScript().model(), Retry: fast, Tools: []agent.Tool{searchTool(searches.run),
			{Spec: agent.ToolSpec{Name: "refund"}, Run: refunds.run, Card: confirmCard}}}
		var n atomic.Int64
		answered := false
		for range 8 {
			p, err := s.process().start(newDying(s.window, crash, &n), "t-1")
			if err != nil {
				continue // died while starting
			}
			out, err := loop.Run(t.Context(), p, history)
			switch {
			case err != nil: // died: the next process resumes
			case out.Status == chatprotocol.LifecycleInterrupted:
				require.Equal(t, []string{agent.CardID("t-1", "b")}, out.Cards)
				if !answered {
					s.answerCard(agent.CardID("t-1", "b"), cards.CardActionSubmit, `{}`)
					answered = true
				}
			default:
				require.Equal(t, chatprotocol.LifecycleCompleted, out.Status)
				return s, &searches, &refunds, n.Load()
			}
		}
		t.Fatal("the turn never ended")
		return nil, nil, nil, 0
	}
	_, _, _, total := host(t, -1)
	require.Greater(t, total, int64(10))
	for crash := int64(1); crash < total; crash++ {
		t.Run(fmt.Sprintf("after append %d", crash), func(t *testing.T) {
			s, searches, refunds, _ := host(t, crash)
			envs := s.envelopes("t-1")
			st := s.state("t-1")
			assert.Equal(t, chatprotocol.LifecycleCompleted, st.Turns[0].Status)
			assert.Empty(t, st.OpenCards())
			assert.Equal(t, 1, searches.max())
			results := map[string]int{}
			for _, r := range of[*chatprotocol.ToolResultEvent](envs) {
				results[r.CallID]++
				assert.Equal(t, chatprotocol.ToolResultOK, r.Status)
			}
			if len(of[*chatprotocol.ToolCallEvent](envs)) == 1 {
				// The crash cut the step after its first call: the resumed
				// loop ran that one, and the model went on without the other.
				assert.Equal(t, map[string]int{"a": 1}, results)
				assert.Zero(t, refunds.total.Load())
				return
			}
			assert.Equal(t, map[string]int{"a": 1, "b": 1}, results)
			assert.Equal(t, int64(1), refunds.total.Load(), "the approved call ran once")
			assert.Len(t, of[*chatprotocol.CardEvent](envs), 1, "the card shown once")
			closed := of[*chatprotocol.CardClosedEvent](envs)
			require.Len(t, closed, 1)
			assert.Equal(t, "answered", closed[0].Outcome)
		})
	}
}
