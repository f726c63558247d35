package chatprotocol_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

// A turn's own JSON is byte for byte the element of the state's turns.
func TestTurnStateMarshalJSONIsTheStatesElement(t *testing.T) {
	s := chatprotocol.NewChatStateV1("c1")
	for i, ev := range []chatprotocol.Event{
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted},
		&chatprotocol.DeltaEvent{Text: "hello <b>"},
		&chatprotocol.ToolCallEvent{CallID: "k1", Name: "search", Input: json.RawMessage(`{"q":"x"}`)},
		&chatprotocol.ToolResultEvent{CallID: "k1", Status: chatprotocol.ToolResultOK, Output: json.RawMessage(`[1]`)},
		&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted},
	} {
		require.NoError(t, s.Apply(chatprotocol.ChatEventEnvelope{ConversationID: "c1", TurnID: "t1", EventID: "t1:" + string(rune('1'+i)), Seq: int64(i + 1), At: "2025-01-01T00:00:00.000Z", Event: ev}))
	}
	whole, err := s.MarshalJSON()
	require.NoError(t, err)
	turn, ok := s.Turn("t1")
	require.True(t, ok)
	one, err := turn.MarshalJSON()
	require.NoError(t, err)
	require.True(t, bytes.Contains(whole, append(append([]byte(`"turns":[`), one...), ']')), "%s\n%s", whole, one)
	require.JSONEq(t, `{"turnId":"t1","status":"completed","lastSeq":5,"text":"hello <b>","toolCalls":[{"callId":"k1","name":"search","input":{"q":"x"},"status":"ok","output":[1]}],"results":[],"provenance":[],"steps":[]}`, string(one))
}
