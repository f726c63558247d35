package legacy

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// envelope parses one version-1 event into an envelope, with product types.
func envelope(t *testing.T, event string) chatprotocol.ChatEventEnvelope {
	t.Helper()
	p := chatprotocol.NewEnvelopeParser(&chatprotocol.ParserOptions{Registry: products(t)})
	env, err := p.Parse([]byte(head + event + `}`))
	require.NoError(t, err, event)
	return env
}

func TestEncodeTable(t *testing.T) {
	tests := []struct {
		name             string
		event            string
		scout, papercusp string // the legacy frame, or the refusal's code
	}{
		{"session", `{"type":"session","sessionId":"s-1"}`, `{"type":"session","sessionId":"s-1"}`, `{"type":"session","sessionId":"s-1"}`},
		{"delta", `{"type":"delta","text":"Hel"}`, `{"type":"token","content":"Hel"}`, `{"type":"delta","text":"Hel"}`},
		{"tool_call", `{"type":"tool_call","callId":"call-1","name":"search_docs","input":{"q":"refund policy"}}`,
			`{"type":"tool_start","tool":"search_docs","callId":"call-1"}`, `{"type":"tool_call","callId":"call-1","name":"search_docs","input":{"q":"refund policy"}}`},
		{"tool_result", `{"type":"tool_result","callId":"call-1","status":"ok","output":{"hits":2}}`,
			"unsupported-event /event/type", `{"type":"tool_result","callId":"call-1","status":"ok","output":{"hits":2}}`},
		{"tool_result with empty blocks", `{"type":"tool_result","callId":"call-1","status":"cancelled","blocks":[]}`,
			"unsupported-event /event/type", `{"type":"tool_result","callId":"call-1","status":"cancelled"}`},
		{"tool_result with blocks", `{"type":"tool_result","callId":"call-1","status":"ok","blocks":[{"kind":"text","text":"t"}]}`,
			"unsupported-event /event/type", "unsupported-event /event/blocks"},
		{"completed", `{"type":"lifecycle","status":"completed","usage":{"totalTokens":431}}`, `{"type":"done","usage":{"totalTokens":431}}`, `{"type":"done","usage":{"totalTokens":431}}`},
		{"completed without usage", `{"type":"lifecycle","status":"completed","reason":"r"}`, `{"type":"done"}`, `{"type":"done"}`},
		{"started", `{"type":"lifecycle","status":"started"}`, "unsupported-event /event/status", "unsupported-event /event/status"},
		{"failed", `{"type":"lifecycle","status":"failed"}`, "unsupported-event /event/status", "unsupported-event /event/status"},
		{"cancelled", `{"type":"lifecycle","status":"cancelled"}`, "unsupported-event /event/status", "unsupported-event /event/status"},
		{"interrupted", `{"type":"lifecycle","status":"interrupted"}`, "unsupported-event /event/status", "unsupported-event /event/status"},
		{"needs-reconciliation", `{"type":"lifecycle","status":"needs-reconciliation"}`, "unsupported-event /event/status", "unsupported-event /event/status"},
		{"error", `{"type":"error","code":"rate-limited","message":"slow down","retryable":true,"retryAfterMs":500}`, `{"type":"error","message":"slow down"}`, `{"type":"error","message":"slow down"}`},
		{"card", `{"type":"card","card":{"correlationId":"k","createdAt":5,"prompt":"Sure?"}}`, `{"type":"card","card":{"correlationId":"k","createdAt":5,"prompt":"Sure?"}}`, `{"type":"card","card":{"correlationId":"k","createdAt":5,"prompt":"Sure?"}}`},
		{"card_closed", `{"type":"card_closed","correlationId":"k","outcome":"answered"}`, `{"type":"card_closed","correlationId":"k"}`, `{"type":"card_closed","correlationId":"k"}`},
		{"state", `{"type":"state","version":3,"snapshot":{"inbox":2}}`, `{"type":"state","version":3,"snapshot":{"inbox":2}}`, `{"type":"state","version":3,"snapshot":{"inbox":2}}`},
		{"navigate", `{"type":"navigate","href":"/p"}`, `{"type":"navigate","href":"/p"}`, `{"type":"navigate","href":"/p"}`},
		{"product", `{"type":"products","products":[1],"x":{}}`, `{"type":"products","products":[1],"x":{}}`, `{"type":"products","products":[1],"x":{}}`},
		{"result", `{"type":"result","blocks":[]}`, "unsupported-event /event/type", "unsupported-event /event/type"},
		{"provenance", `{"type":"provenance","provider":"anthropic"}`, "unsupported-event /event/type", "unsupported-event /event/type"},
		{"step", `{"type":"step","step":1,"status":"started"}`, "unsupported-event /event/type", "unsupported-event /event/type"},
		{"capabilities", `{"type":"capabilities","capabilities":{"connectionReplay":true,"persistedHistory":false,"persistedDecisions":false,"completedToolCheckpoints":false,"interruptedTurnRecovery":false}}`,
			"unsupported-event /event/type", "unsupported-event /event/type"},
		{"unknown members dropped", `{"type":"delta","text":"x","future":1}`, `{"type":"token","content":"x"}`, `{"type":"delta","text":"x"}`},
	}
	for _, tt := range tests {
		env := envelope(t, tt.event)
		for d, want := range map[Dialect]string{Scout: tt.scout, Papercusp: tt.papercusp} {
			t.Run(tt.name+"/"+d.String(), func(t *testing.T) {
				f, err := EncodeLegacyChatFrame(env, d)
				if want[0] != '{' {
					assert.Nil(t, f)
					require.Error(t, err)
					e := refusalOf(t, err)
					assert.Equal(t, want, string(e.Code)+" "+e.Path)
					return
				}
				require.NoError(t, err)
				got, err := MarshalChatEvent(f)
				require.NoError(t, err)
				assert.Equal(t, want, string(got))
				back, err := DecodeLegacyChatFrame(got, d)
				require.NoError(t, err)
				assert.Equal(t, f, back, "the frame reads back as itself")
			})
		}
	}
}

func TestEncodeRefuses(t *testing.T) {
	beyond := int64(1<<53 + 1) // a JavaScript number rounds it; DecodeLegacyChatFrame refuses it
	_, err := EncodeLegacyChatFrame(envelope(t, `{"type":"delta","text":"x"}`), 0)
	assert.ErrorIs(t, err, refusal.ErrUnsupportedVersion)

	for name, ev := range map[string]chatprotocol.Event{
		"nil":         nil,
		"nil pointer": (*chatprotocol.DeltaEvent)(nil),
	} {
		_, err := EncodeLegacyChatFrame(chatprotocol.ChatEventEnvelope{Event: ev}, Scout)
		require.ErrorIs(t, err, refusal.ErrInvalidEnvelope, name)
		assert.Equal(t, "/event", refusalOf(t, err).Path, name)
	}

	for name, tt := range map[string]struct {
		ev   chatprotocol.Event
		code refusal.Code
		path string
	}{
		"tool call without id":        {&chatprotocol.ToolCallEvent{Name: "x"}, refusal.CodeMissingCallID, "/event/callId"},
		"unknown result status":       {&chatprotocol.ToolResultEvent{CallID: "c", Status: "done"}, refusal.CodeUnknownResultStatus, "/event/status"},
		"empty href":                  {&chatprotocol.NavigateEvent{}, refusal.CodeInvalidEvent, "/event/href"},
		"app event of core type":      {&chatprotocol.AppEvent{Type: "delta", Raw: json.RawMessage(`{"type":"delta"}`)}, refusal.CodeUnsupportedEvent, "/event/type"},
		"bad utf-8":                   {&chatprotocol.DeltaEvent{Text: "\xff"}, refusal.CodeInvalidEvent, "/event/text"},
		"state version beyond 2^53-1": {&chatprotocol.StateEvent{Version: 1<<53 + 1, Snapshot: json.RawMessage(`{}`)}, refusal.CodeUnsupportedEvent, "/event/version"},
		"tokens beyond 2^53-1": {&chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted, Usage: &chatprotocol.Usage{TotalTokens: &beyond}},
			refusal.CodeUnsupportedEvent, "/event/usage/totalTokens"},
	} {
		_, err := EncodeLegacyChatFrame(chatprotocol.ChatEventEnvelope{Event: tt.ev}, Papercusp)
		require.ErrorIs(t, err, refusal.Sentinel(tt.code), name)
		assert.Equal(t, tt.path, refusalOf(t, err).Path, name)
	}
}
