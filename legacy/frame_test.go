package legacy

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func TestDialectNames(t *testing.T) {
	for _, d := range []Dialect{Scout, Papercusp} {
		got, ok := ParseDialect(d.String())
		require.True(t, ok, d.String())
		assert.Equal(t, d, got)
	}
	assert.Equal(t, "scout", Scout.String())
	assert.Equal(t, "papercusp", Papercusp.String())
	assert.Equal(t, "invalid", Dialect(0).String())
	for _, name := range []string{"", "Scout", "invalid", "papercup"} {
		_, ok := ParseDialect(name)
		assert.False(t, ok, name)
	}
}

func TestMarshalFramePapercusp(t *testing.T) {
	tests := []struct {
		f    Frame
		want string
	}{
		{&Delta{Text: "Hel\u2028<lo>\x01"}, "{\"type\":\"delta\",\"text\":\"Hel\u2028<lo>\\u0001\"}"},
		{&Delta{}, `{"type":"delta","text":""}`},
		{&ToolCall{Name: "search"}, `{"type":"tool_call","name":"search"}`},
		{&ToolCall{CallID: "c-1", Name: "search", Input: json.RawMessage(" {\"q\": 1}\n")}, `{"type":"tool_call","callId":"c-1","name":"search","input":{"q": 1}}`},
		{&ToolResult{CallID: "c-1", Status: chatprotocol.ToolResultOK, Output: json.RawMessage(`[1]`)}, `{"type":"tool_result","callId":"c-1","status":"ok","output":[1]}`},
		{&ToolResult{}, `{"type":"tool_result"}`},
		{&chatprotocol.ChatToken{Content: "x"}, `{"type":"token","content":"x"}`},
		{&chatprotocol.ChatAppEvent{Type: "products", Raw: json.RawMessage(`{"type":"products","n":1}`)}, `{"type":"products","n":1}`},
	}
	for _, tt := range tests {
		got, err := MarshalFrame(tt.f)
		require.NoError(t, err, tt.want)
		assert.Equal(t, tt.want, string(got))
		m, ok := tt.f.(json.Marshaler)
		require.True(t, ok)
		viaMethod, err := m.MarshalJSON()
		require.NoError(t, err)
		assert.Equal(t, tt.want, string(viaMethod))
	}
}

// alien implements Frame without being one of its types.
type alien struct{}

func (alien) ChatEventType() string { return "token" }

func TestMarshalFrameRefuses(t *testing.T) {
	for name, f := range map[string]Frame{
		"nil":           nil,
		"nil pointer":   (*Delta)(nil),
		"nil root type": (*chatprotocol.ChatToken)(nil),
		"alien":         alien{},
		"bad input":     &ToolCall{Name: "x", Input: json.RawMessage(`{`)},
		"bad output":    &ToolResult{Status: "ok", Output: json.RawMessage(`nope`)},
		"bad app raw":   &chatprotocol.ChatAppEvent{Type: "p", Raw: json.RawMessage(`{`)},
	} {
		_, err := MarshalFrame(f)
		assert.ErrorIs(t, err, refusal.ErrInvalidEvent, name)
	}
	_, err := MarshalFrame(&ToolCall{Name: "x", Input: json.RawMessage(`{`)})
	e, ok := err.(*refusal.Error)
	require.True(t, ok)
	assert.Equal(t, "/input", e.Path)
}
