package uistream_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/uiclients"
	"github.com/Papercusp/chat-protocol-go/uistream"
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

const wantUIMessages = `[
 {"id":"t1-user","role":"user","parts":[{"type":"text","text":"weather?","state":"done"}]},
 {"id":"t1","role":"assistant","parts":[{"type":"step-start"},{"type":"text","text":"It is 4 °C.","state":"done"},
  {"type":"tool-weather","toolCallId":"call-1","state":"output-available","input":{"city":"Oslo"},"output":{"c":4}},
  {"type":"tool-radar","toolCallId":"call-2","state":"output-error","input":null,"errorText":"down"}]},
 {"id":"t2-user","role":"user","parts":[{"type":"text","text":"tomorrow?","state":"done"}]},
 {"id":"t2","role":"assistant","parts":[{"type":"step-start"},
  {"type":"tool-forecast","toolCallId":"call-3","state":"input-available","input":null}]},
 {"id":"t3-user","role":"user","parts":[{"type":"text","text":"hello?","state":"done"}]}
]`

func TestHistoryMessages(t *testing.T) {
	got, err := uistream.HistoryMessages(storedHistory())
	require.NoError(t, err)
	require.JSONEq(t, wantUIMessages, string(got))
}

// The ai package's own validateUIMessages, on the 7.x, 6.x and 5.x lines,
// accepts the history.
func TestHistoryMessagesValidateInTheClients(t *testing.T) {
	got, err := uistream.HistoryMessages(storedHistory())
	require.NoError(t, err)
	out := uiclients.RunWith(t, time.Minute, got, "uimessages.mjs")
	var res struct {
		Checked []string `json:"checked"`
		Errors  []string `json:"errors"`
	}
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	require.Empty(t, res.Errors)
	require.Equal(t, []string{"ai", "ai6", "ai5"}, res.Checked)
}
