package conversation_test

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agent"
	"github.com/Papercusp/chat-protocol-go/conversation"
)

// reduce applies events as turnID's envelopes and returns the turn's
// stored form.
func reduce(t *testing.T, conv, turnID string, events ...chatprotocol.Event) []byte {
	t.Helper()
	s := chatprotocol.NewChatStateV1(conv)
	for i, ev := range events {
		seq := int64(i + 1)
		require.NoError(t, s.Apply(chatprotocol.ChatEventEnvelope{ConversationID: conv, TurnID: turnID,
			EventID: turnID + ":" + strconv.FormatInt(seq, 10), Seq: seq, At: "2025-01-01T00:00:00.000Z", Event: ev}))
	}
	ts, ok := s.Turn(turnID)
	require.True(t, ok)
	b, err := ts.MarshalJSON()
	require.NoError(t, err)
	return b
}

// history is a conversation of three turns: one with text and two tool
// calls (one failed), one cancelled with a call left without a result,
// and a running one.
func history(t *testing.T) conversation.History {
	t.Helper()
	s := conversation.NewMemoryStore()
	ctx := t.Context()
	c, err := s.Create(ctx, "c1", alice)
	require.NoError(t, err)
	t1, _, err := s.StartTurn(ctx, c.ID, conversation.TurnStart{UserText: "what is the weather?"})
	require.NoError(t, err)
	require.NoError(t, s.EndTurn(ctx, c.ID, t1.ID, reduce(t, c.ID, t1.ID,
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		&chatprotocol.DeltaEvent{Text: "Let me look. "},
		&chatprotocol.ToolCallEvent{CallID: "call-1", Name: "weather", Input: json.RawMessage(`{"city":"Oslo"}`)},
		&chatprotocol.ToolResultEvent{CallID: "call-1", Status: chatprotocol.ToolResultOK, Output: json.RawMessage(`{"c":4}`)},
		&chatprotocol.ToolCallEvent{CallID: "call-2", Name: "radar"},
		&chatprotocol.ToolResultEvent{CallID: "call-2", Status: chatprotocol.ToolResultError, Output: json.RawMessage(`"down"`)},
		&chatprotocol.DeltaEvent{Text: "It is 4 °C."},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted},
	)))
	t2, _, err := s.StartTurn(ctx, c.ID, conversation.TurnStart{UserText: "and tomorrow?"})
	require.NoError(t, err)
	require.NoError(t, s.EndTurn(ctx, c.ID, t2.ID, reduce(t, c.ID, t2.ID,
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		&chatprotocol.ToolCallEvent{CallID: "call-3", Name: "forecast"},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCancelled},
	)))
	_, _, err = s.StartTurn(ctx, c.ID, conversation.TurnStart{UserText: "hello?"})
	require.NoError(t, err)
	h, err := s.History(ctx, c.ID)
	require.NoError(t, err)
	return h
}

func TestHistoryMessages(t *testing.T) {
	msgs, err := history(t).Messages()
	require.NoError(t, err)
	require.Equal(t, []agent.Message{
		{Role: agent.RoleUser, Text: "what is the weather?"},
		{Role: agent.RoleAssistant, Text: "Let me look. It is 4 °C.", Calls: []agent.Call{
			{ID: "call-1", Name: "weather", Input: json.RawMessage(`{"city":"Oslo"}`)},
			{ID: "call-2", Name: "radar"},
		}},
		{Role: agent.RoleTool, Results: []agent.Result{
			{CallID: "call-1", Name: "weather", Output: json.RawMessage(`{"c":4}`)},
			{CallID: "call-2", Name: "radar", Output: json.RawMessage(`"down"`), IsError: true},
		}},
		{Role: agent.RoleUser, Text: "and tomorrow?"},
		{Role: agent.RoleAssistant, Calls: []agent.Call{{ID: "call-3", Name: "forecast"}}},
		{Role: agent.RoleTool, Results: []agent.Result{
			{CallID: "call-3", Name: "forecast", Output: json.RawMessage(`"the call has no result: its turn ended before it"`), IsError: true},
		}},
		{Role: agent.RoleUser, Text: "hello?"},
	}, msgs)
}

func TestHistoryStateJSON(t *testing.T) {
	h := history(t)
	var got struct {
		SchemaVersion  int               `json:"schemaVersion"`
		ConversationID string            `json:"conversationId"`
		Turns          []json.RawMessage `json:"turns"`
		OpenCards      []json.RawMessage `json:"openCards"`
	}
	require.NoError(t, json.Unmarshal(h.StateJSON(), &got))
	require.Equal(t, 1, got.SchemaVersion)
	require.Equal(t, "c1", got.ConversationID)
	require.Len(t, got.Turns, 2, "the running turn has no state yet")
	require.Equal(t, string(h.Turns[0].State), string(got.Turns[0]))
	require.Equal(t, string(h.Turns[1].State), string(got.Turns[1]))
	require.NotNil(t, got.OpenCards)
	require.Empty(t, got.OpenCards)
}
