package legacy

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func f64(f float64) *float64 { return &f }

func TestDecodeAccepts(t *testing.T) {
	tests := []struct {
		name  string
		d     Dialect
		frame string
		want  Frame
	}{
		{"scout session", Scout, `{"type":"session","sessionId":"s-1"}`, &SessionFrame{SessionID: "s-1"}},
		{"scout token", Scout, `{"type":"token","content":"Hel"}`, &TokenFrame{Content: "Hel"}},
		{"scout tool_start", Scout, `{"type":"tool_start","tool":"search"}`, &ToolStartFrame{Tool: "search"}},
		{"scout tool_start with call id", Scout, `{"type":"tool_start","tool":"search","callId":"c-9"}`, &ToolStartFrame{Tool: "search", CallID: new("c-9")}},
		{"scout card_closed", Scout, `{"type":"card_closed","correlationId":"k"}`, &CardClosedFrame{CorrelationID: "k"}},
		{"scout state", Scout, `{"type":"state","version":3,"snapshot":{"inbox":2}}`, &StateFrame{Version: 3, Snapshot: json.RawMessage(`{"inbox":2}`)}},
		{"scout state null snapshot", Scout, `{"type":"state","version":0,"snapshot":null}`, &StateFrame{Snapshot: json.RawMessage(`null`)}},
		{"scout state fraction", Scout, `{"type":"state","version":1.5}`, &StateFrame{Version: 1.5}},
		{"scout state without snapshot", Scout, `{"type":"state","version":1}`, &StateFrame{Version: 1}},
		{"scout done", Scout, `{"type":"done"}`, &DoneFrame{}},
		{"scout done usage", Scout, `{"type":"done","usage":{"totalTokens":812,"costUsd":0.0041}}`, &DoneFrame{Usage: &Usage{TotalTokens: f64(812), CostUSD: f64(0.0041)}}},
		{"scout error", Scout, `{"type":"error","message":"upstream timed out"}`, &ErrorFrame{Message: "upstream timed out"}},
		{"scout navigate", Scout, `{"type":"navigate","href":"/p"}`, &NavigateFrame{Href: "/p"}},
		{"scout product", Scout, ` {"type":"products","products":[]} `, &AppFrame{Type: "products", Raw: json.RawMessage(`{"type":"products","products":[]}`)}},
		{"scout reads delta as a product type", Scout, `{"type":"delta","text":"x"}`, &AppFrame{Type: "delta", Raw: json.RawMessage(`{"type":"delta","text":"x"}`)}},
		{"duplicate names last wins", Scout, `{"type":"token","content":"a","content":"b"}`, &TokenFrame{Content: "b"}},
		{"invalid UTF-8 as U+FFFD", Scout, "{\"type\":\"token\",\"content\":\"a\xffb\"}", &TokenFrame{Content: "a\ufffdb"}},
		{"papercusp delta", Papercusp, `{"type":"delta","text":"Hel"}`, &DeltaFrame{Text: "Hel"}},
		{"papercusp tool_call", Papercusp, `{"type":"tool_call","name":"search","input":{"q":"refund"}}`, &ToolCallFrame{Name: "search", Input: json.RawMessage(`{"q":"refund"}`)}},
		{"papercusp tool_call with id", Papercusp, `{"type":"tool_call","callId":"c-1","name":"search"}`, &ToolCallFrame{CallID: "c-1", Name: "search"}},
		{"papercusp tool_call null input", Papercusp, `{"type":"tool_call","name":"search","input":null}`, &ToolCallFrame{Name: "search", Input: json.RawMessage(`null`)}},
		{"papercusp tool_result", Papercusp, `{"type":"tool_result","callId":"c-1","status":"ok","output":{"hits":2}}`, &ToolResultFrame{CallID: "c-1", Status: chatprotocol.ToolResultOK, Output: json.RawMessage(`{"hits":2}`)}},
		{"papercusp tool_result without status", Papercusp, `{"type":"tool_result","callId":"c-1"}`, &ToolResultFrame{CallID: "c-1"}},
		{"papercusp tool_result unknown status kept", Papercusp, `{"type":"tool_result","callId":"c-1","status":"done"}`, &ToolResultFrame{CallID: "c-1", Status: "done"}},
		{"papercusp session", Papercusp, `{"type":"session","sessionId":"s-1"}`, &SessionFrame{SessionID: "s-1"}},
		{"papercusp done", Papercusp, `{"type":"done","usage":{"totalTokens":1}}`, &DoneFrame{Usage: &Usage{TotalTokens: f64(1)}}},
		{"papercusp reads token as a product type", Papercusp, `{"type":"token","content":"x"}`, &AppFrame{Type: "token", Raw: json.RawMessage(`{"type":"token","content":"x"}`)}},
		{"papercusp reads tool_start as a product type", Papercusp, `{"type":"tool_start","tool":1}`, &AppFrame{Type: "tool_start", Raw: json.RawMessage(`{"type":"tool_start","tool":1}`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeLegacyChatFrame([]byte(tt.frame), tt.d)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestDecodeCard(t *testing.T) {
	frame := `{"type":"card","card":{"correlationId":"corr-91","createdAt":1764500001000,"prompt":"Which size?","presentation":{"kind":"radio","options":[{"id":"s42","label":"EU 42"}]}}}`
	for _, d := range []Dialect{Scout, Papercusp} {
		got, err := DecodeLegacyChatFrame([]byte(frame), d)
		require.NoError(t, err)
		card, ok := got.(*CardFrame)
		require.True(t, ok, "%T", got)
		assert.Equal(t, "corr-91", card.Card.CorrelationID)
		assert.Equal(t, 1764500001000.0, card.Card.CreatedAt)
		require.NotNil(t, card.Card.Presentation)
		assert.Equal(t, "radio", card.Card.Presentation.Kind)
	}
}

// refusalOf returns the *Error of err, failing the test when there is none.
func refusalOf(t *testing.T, err error) *refusal.Error {
	t.Helper()
	e, ok := errors.AsType[*refusal.Error](err)
	require.True(t, ok, "want a *refusal.Error, got %v", err)
	return e
}

func TestDecodeRefuses(t *testing.T) {
	tests := []struct {
		name  string
		d     Dialect
		frame string
		code  refusal.Code
		path  string
	}{
		{"no dialect", 0, `{"type":"token","content":"x"}`, refusal.CodeUnsupportedVersion, ""},
		{"unknown dialect", 9, `{"type":"token","content":"x"}`, refusal.CodeUnsupportedVersion, ""},
		{"not JSON", Scout, `{"type":`, refusal.CodeInvalidEvent, ""},
		{"empty", Scout, ``, refusal.CodeInvalidEvent, ""},
		{"array", Scout, `[{"type":"token"}]`, refusal.CodeInvalidEvent, ""},
		{"trailing data", Scout, `{"type":"done"} {}`, refusal.CodeInvalidEvent, ""},
		{"no type", Scout, `{"content":"x"}`, refusal.CodeInvalidEvent, "/type"},
		{"type not a string", Scout, `{"type":1}`, refusal.CodeInvalidEvent, "/type"},
		{"case variant of type", Scout, `{"TYPE":"token","content":"x"}`, refusal.CodeInvalidEvent, "/type"},
		{"schemaVersion 1", Scout, `{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"e","seq":1,"event":{"type":"delta","text":""}}`, refusal.CodeUnsupportedVersion, "/schemaVersion"},
		{"schemaVersion 0", Scout, `{"type":"token","content":"x","schemaVersion":0}`, refusal.CodeUnsupportedVersion, "/schemaVersion"},
		{"schemaVersion null", Papercusp, `{"type":"delta","text":"x","schemaVersion":null}`, refusal.CodeUnsupportedVersion, "/schemaVersion"},
		{"session without id", Scout, `{"type":"session"}`, refusal.CodeInvalidEvent, "/sessionId"},
		{"session id number", Scout, `{"type":"session","sessionId":7}`, refusal.CodeInvalidEvent, "/sessionId"},
		{"token without content", Scout, `{"type":"token"}`, refusal.CodeInvalidEvent, "/content"},
		{"token content null", Scout, `{"type":"token","content":null}`, refusal.CodeInvalidEvent, "/content"},
		{"tool_start without tool", Scout, `{"type":"tool_start"}`, refusal.CodeInvalidEvent, "/tool"},
		{"tool_start call id number", Scout, `{"type":"tool_start","tool":"x","callId":5}`, refusal.CodeMissingCallID, "/callId"},
		{"card not an object", Scout, `{"type":"card","card":"x"}`, refusal.CodeInvalidEvent, "/card"},
		{"card without createdAt", Scout, `{"type":"card","card":{"correlationId":"k","prompt":"p"}}`, refusal.CodeInvalidEvent, "/card/createdAt"},
		{"card without prompt", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":1}}`, refusal.CodeInvalidEvent, "/card/prompt"},
		{"card option without label", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"p","presentation":{"kind":"radio","options":[{"id":"a","label":"A"},{"id":"b"}]}}}`, refusal.CodeInvalidEvent, "/card/presentation/options/1/label"},
		{"card fallbackText null", Scout, `{"type":"card","card":{"correlationId":"k","createdAt":1,"prompt":"p","fallbackText":null}}`, refusal.CodeInvalidEvent, "/card/fallbackText"},
		{"tool_start call id null", Scout, `{"type":"tool_start","tool":"x","callId":null}`, refusal.CodeMissingCallID, "/callId"},
		{"state without version", Scout, `{"type":"state","snapshot":{}}`, refusal.CodeInvalidEvent, "/version"},
		{"card_closed without id", Scout, `{"type":"card_closed"}`, refusal.CodeInvalidEvent, "/correlationId"},
		{"state version string", Scout, `{"type":"state","version":"1","snapshot":{}}`, refusal.CodeInvalidEvent, "/version"},
		{"done usage not an object", Scout, `{"type":"done","usage":5}`, refusal.CodeInvalidEvent, "/usage"},
		{"done usage tokens string", Scout, `{"type":"done","usage":{"totalTokens":"5"}}`, refusal.CodeInvalidEvent, "/usage/totalTokens"},
		{"error without message", Scout, `{"type":"error"}`, refusal.CodeInvalidEvent, "/message"},
		{"navigate href object", Scout, `{"type":"navigate","href":{}}`, refusal.CodeInvalidEvent, "/href"},
		{"papercusp delta without text", Papercusp, `{"type":"delta"}`, refusal.CodeInvalidEvent, "/text"},
		{"papercusp delta text number", Papercusp, `{"type":"delta","text":1}`, refusal.CodeInvalidEvent, "/text"},
		{"papercusp tool_call without name", Papercusp, `{"type":"tool_call","callId":"c"}`, refusal.CodeInvalidEvent, "/name"},
		{"papercusp tool_call call id number", Papercusp, `{"type":"tool_call","callId":1,"name":"x"}`, refusal.CodeMissingCallID, "/callId"},
		{"papercusp tool_result status number", Papercusp, `{"type":"tool_result","callId":"c","status":1}`, refusal.CodeUnknownResultStatus, "/status"},
		{"papercusp tool_result call id object", Papercusp, `{"type":"tool_result","callId":{},"status":"ok"}`, refusal.CodeMissingCallID, "/callId"},
		{"papercusp error without message", Papercusp, `{"type":"error","message":false}`, refusal.CodeInvalidEvent, "/message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeLegacyChatFrame([]byte(tt.frame), tt.d)
			assert.Nil(t, got)
			require.ErrorIs(t, err, refusal.Sentinel(tt.code))
			assert.Equal(t, tt.path, refusalOf(t, err).Path)
		})
	}
}

// TestDecodeAgreesWithParseChatEvent: in the Scout dialect, every frame
// DecodeLegacyChatFrame accepts is the event ParseChatEvent gives, so the
// adapter reads the shipped union exactly as the version-0 parser does.
func TestDecodeAgreesWithParseChatEvent(t *testing.T) {
	for _, frame := range []string{
		`{"type":"session","sessionId":"s"}`, `{"type":"token","content":""}`,
		`{"type":"tool_start","tool":"t","callId":"c"}`, `{"type":"state","version":1.5}`,
		`{"type":"state","version":0,"snapshot":null}`,
		`{"type":"done","usage":{}}`, `{"type":"cart_mutate","op":"add"}`, `{"type":"error","message":"m","extra":1}`,
	} {
		got, err := DecodeLegacyChatFrame([]byte(frame), Scout)
		require.NoError(t, err, frame)
		assert.Equal(t, ParseChatEvent([]byte(frame)), got, frame)
	}
}
