package chatprotocol

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoTurns returns the envelopes of a conversation of two interleaved
// turns that touch every part of a ChatStateV1.
func twoTurns() []ChatEventEnvelope {
	tokens := int64(12)
	at := func(turn string, seq int64, ev Event) ChatEventEnvelope {
		return ChatEventEnvelope{ConversationID: "c-1", TurnID: turn, EventID: fmt.Sprintf("%s-%d", turn, seq), Seq: seq, Event: ev}
	}
	return []ChatEventEnvelope{
		at("t-1", 1, &SessionEvent{SessionID: "s-1"}),
		at("t-1", 2, &ToolCallEvent{CallID: "call-1", Name: "search", Input: json.RawMessage(`{"q":"x"}`)}),
		at("t-1", 3, &DeltaEvent{Text: "Hel"}),
		at("t-2", 1, &ProvenanceEvent{Provider: "p"}),
		at("t-1", 4, openCard("k-1", 1)),
		at("t-2", 2, openCard("k-2", 2)),
		at("t-1", 5, &DeltaEvent{Text: "lo"}),
		at("t-1", 6, &ToolResultEvent{CallID: "call-1", Status: ToolResultOK, Output: json.RawMessage(`[1]`), Blocks: []ResultBlock{{Kind: ResultBlockText, Text: "one"}}}),
		at("t-2", 3, &CardClosedEvent{CorrelationID: "k-1"}),
		at("t-2", 4, &ResultEvent{Blocks: []ResultBlock{{Kind: ResultBlockText, Text: "r"}}}),
		at("t-1", 7, &StateEvent{Version: 1, Snapshot: json.RawMessage(`{"a":1}`)}),
		at("t-2", 5, &CapabilitiesEvent{Capabilities: ChatCapabilities{PersistedHistory: true}}),
		at("t-1", 8, &ErrorEvent{Code: "x", Message: "m", Retryable: true}),
		at("t-2", 6, &ToolCallEvent{CallID: "call-9", Name: "late"}),
		at("t-1", 9, &LifecycleEvent{Status: LifecycleCompleted, Usage: &Usage{TotalTokens: &tokens}}),
		at("t-2", 7, &LifecycleEvent{Status: LifecycleCancelled}),
		at("t-2", 8, &ToolResultEvent{CallID: "call-9", Status: ToolResultCancelled}),
		at("t-1", 10, &DeltaEvent{Text: "refused: the turn completed"}),
	}
}

// TestCloneGoesOnIndependently: cloned after any prefix of a conversation,
// the clone and the original each reach, by the rest of it, what one state
// reaches by all of it, and neither sees the other's envelopes.
func TestCloneGoesOnIndependently(t *testing.T) {
	envs := twoTurns()
	applyTo := func(s *ChatStateV1, envs []ChatEventEnvelope) []refusal.Code {
		var codes []refusal.Code
		for _, e := range envs {
			codes = append(codes, refusal.CodeOf(s.Apply(e)))
		}
		return codes
	}
	whole := NewChatStateV1("c-1")
	wantCodes := applyTo(whole, envs)
	require.Equal(t, refusal.CodeTurnTerminated, wantCodes[len(wantCodes)-1], "the stream ends with a refusal")
	want := stateJSON(t, whole)
	for k := range len(envs) + 1 {
		s := NewChatStateV1("c-1")
		prefixCodes := applyTo(s, envs[:k])
		prefix := stateJSON(t, s)

		c := s.Clone()
		assert.Equal(t, prefix, stateJSON(t, c), "k=%d: the clone starts where s is", k)
		if k > 0 && prefixCodes[k-1] == "" {
			require.NoError(t, c.Apply(envs[k-1]), "k=%d: the clone knows the envelopes s applied (identical redelivery)", k)
		}
		assert.Equal(t, wantCodes, append(prefixCodes, applyTo(c, envs[k:])...), "k=%d: the clone accepts and refuses as s would", k)
		assert.Equal(t, want, stateJSON(t, c), "k=%d", k)
		assert.Equal(t, prefix, stateJSON(t, s), "k=%d: applying to the clone leaves s as it was", k)

		c2 := s.Clone()
		applyTo(s, envs[k:])
		assert.Equal(t, want, stateJSON(t, s), "k=%d", k)
		assert.Equal(t, prefix, stateJSON(t, c2), "k=%d: applying to s leaves the clone as it was", k)
	}
}

// TestCloneCopiesWhatCallersChange: the turns, calls and lists of a clone
// are its own, and Turn finds the clone's turns.
func TestCloneCopiesWhatCallersChange(t *testing.T) {
	s := NewChatStateV1("c-1")
	applyTo := twoTurns()[:8]
	applyAll(t, s, applyTo[0], applyTo[1], applyTo[2], applyTo[4], applyTo[6], applyTo[7])
	before := stateJSON(t, s)

	c := s.Clone()
	ct, ok := c.Turn("t-1")
	require.True(t, ok)
	require.Same(t, c.Turns[0], ct)
	st, _ := s.Turn("t-1")
	require.NotSame(t, st, ct)
	ct.Status = LifecycleFailed
	ct.ToolCalls[0].Status = ToolCallPending
	ct.ToolCalls[0].Blocks[0].Text = "changed"
	ct.Results = append(ct.Results, ResultBlock{Kind: ResultBlockText, Text: "added"})
	c.Turns = append(c.Turns, &TurnState{TurnID: "t-9"})
	c.ConversationID = "other"
	assert.Equal(t, before, stateJSON(t, s))
	assert.Equal(t, "Hello", ct.Text())
}

func TestCloneOfZeroState(t *testing.T) {
	var s ChatStateV1
	c := s.Clone()
	applyAll(t, c, env(1, &DeltaEvent{Text: "a"}))
	assert.Equal(t, "c-1", c.ConversationID)
	assert.Empty(t, s.ConversationID)
	assert.Empty(t, s.Turns)
}
