package agui_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/uiclients"
)

// storedHistory is a history of three turns as a store returns it: one
// with text and two tool calls (one failed), one cancelled with a call
// left without a result, and a running one.
func storedHistory() conversation.History {
	return conversation.History{
		Conversation: conversation.Conversation{ID: "c1", Owner: conversation.Principal{ID: "u"}, Turns: 3, Running: "t3"},
		Turns: []conversation.Turn{
			{ID: "t1", Position: 1, UserText: "weather?", State: []byte(`{"turnId":"t1","status":"completed","lastSeq":8,"text":"It is 4 °C.","toolCalls":[` +
				`{"callId":"call-1","name":"weather","input":{"city":"Oslo"},"status":"ok","output":{"c":4}},` +
				`{"callId":"call-2","name":"radar","status":"error","output":"down"}],"results":[],"provenance":[]}`)},
			{ID: "t2", Position: 2, UserText: "tomorrow?", State: []byte(`{"turnId":"t2","status":"cancelled","lastSeq":3,"text":"","toolCalls":[` +
				`{"callId":"call-3","name":"forecast","status":"pending"}],"results":[],"provenance":[]}`)},
			{ID: "t3", Position: 3, UserText: "hello?"},
		},
	}
}

const wantSnapshot = `{"type":"MESSAGES_SNAPSHOT","messages":[
 {"id":"t1-user","role":"user","content":"weather?"},
 {"id":"t1","role":"assistant","content":"It is 4 °C.","toolCalls":[
  {"id":"call-1","type":"function","function":{"name":"weather","arguments":"{\"city\":\"Oslo\"}"}},
  {"id":"call-2","type":"function","function":{"name":"radar","arguments":"{}"}}]},
 {"id":"call-1-result","role":"tool","content":"{\"c\":4}","toolCallId":"call-1"},
 {"id":"call-2-result","role":"tool","content":"\"down\"","toolCallId":"call-2","error":"the tool call error"},
 {"id":"t2-user","role":"user","content":"tomorrow?"},
 {"id":"t2","role":"assistant","toolCalls":[{"id":"call-3","type":"function","function":{"name":"forecast","arguments":"{}"}}]},
 {"id":"call-3-result","role":"tool","content":"","toolCallId":"call-3","error":"the call has no result: its turn ended before it"},
 {"id":"t3-user","role":"user","content":"hello?"}
]}`

func TestMessagesSnapshot(t *testing.T) {
	got, err := agui.MessagesSnapshot(storedHistory())
	require.NoError(t, err)
	require.JSONEq(t, wantSnapshot, string(got))
}

// @ag-ui/core's own schema accepts the snapshot.
func TestMessagesSnapshotInTheClientSchema(t *testing.T) {
	got, err := agui.MessagesSnapshot(storedHistory())
	require.NoError(t, err)
	out := uiclients.RunWith(t, time.Minute, got, "agsnapshot.mjs")
	var res struct {
		Errors   []string `json:"errors"`
		Messages int      `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	require.Empty(t, res.Errors)
	require.Equal(t, 8, res.Messages)
}
