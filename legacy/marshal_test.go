package legacy

import (
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func TestMarshalChatEventRefusals(t *testing.T) {
	cases := []struct {
		ev   Frame
		path string
	}{
		{nil, ""},
		{&AppFrame{Type: "x", Raw: raw(`{"type":`)}, ""},
		{&StateFrame{Snapshot: raw(`{`)}, "/snapshot"},
		// Numbers JSON cannot hold, and a dataSchemaJson that is no object.
		{&StateFrame{Version: math.NaN(), Snapshot: raw(`1`)}, "/version"},
		{&DoneFrame{Usage: &Usage{TotalTokens: new(math.Inf(-1))}}, "/usage/totalTokens"},
		{&CardFrame{Card: Card{CorrelationID: "k", CreatedAt: math.Inf(1), Prompt: "p"}}, "/card/createdAt"},
		{&CardFrame{Card: Card{CorrelationID: "k", CreatedAt: 1, Prompt: "p", Presentation: &CardPresentation{Kind: "slider", Max: &CardBound{Number: math.NaN()}}}}, "/card/presentation/max"},
		{&CardFrame{Card: Card{CorrelationID: "k", CreatedAt: 1, Prompt: "p", DataSchemaJSON: raw(`"{}"`)}}, "/card/dataSchemaJson"},
		{&CardFrame{Card: Card{CorrelationID: "k", CreatedAt: 1, Prompt: "p", DataSchemaJSON: raw(`{`)}}, "/card/dataSchemaJson"},
		{&ToolCallFrame{Name: "x", Input: json.RawMessage(`{`)}, "/input"},
		{&ToolResultFrame{Status: "ok", Output: json.RawMessage(`nope`)}, "/output"},
	}
	for _, c := range cases {
		_, err := MarshalChatEvent(c.ev)
		require.ErrorIs(t, err, refusal.ErrInvalidEvent)
		e, ok := errors.AsType[*refusal.Error](err)
		require.True(t, ok)
		assert.Equal(t, c.path, e.Path)
	}
	out, err := MarshalChatEvent(&AppFrame{Type: "heartbeat"})
	require.NoError(t, err)
	assert.Equal(t, `{"type":"heartbeat"}`, string(out))
}

// TestMarshalChatEventNilPointer: a nil frame, typed or not, is refused
// with invalid-event as documented, never dereferenced.
func TestMarshalChatEventNilPointer(t *testing.T) {
	for _, ev := range []Frame{nil, (*TokenFrame)(nil), (*AppFrame)(nil), (*CardFrame)(nil), (*DoneFrame)(nil), (*DeltaFrame)(nil)} {
		b, err := MarshalChatEvent(ev)
		require.ErrorIs(t, err, refusal.ErrInvalidEvent, "%T", ev)
		assert.Nil(t, b, "%T", ev)
	}
}

// TestMarshalChatEventPapercusp writes the Papercusp frames, and one frame
// of the section-2 union and an app frame beside them, directly and through
// MarshalJSON.
func TestMarshalChatEventPapercusp(t *testing.T) {
	tests := []struct {
		f    Frame
		want string
	}{
		{&DeltaFrame{Text: "Hel\u2028<lo>\x01"}, "{\"type\":\"delta\",\"text\":\"Hel\u2028<lo>\\u0001\"}"},
		{&DeltaFrame{}, `{"type":"delta","text":""}`},
		{&ToolCallFrame{Name: "search"}, `{"type":"tool_call","name":"search"}`},
		{&ToolCallFrame{CallID: "c-1", Name: "search", Input: json.RawMessage(" {\"q\": 1}\n")}, `{"type":"tool_call","callId":"c-1","name":"search","input":{"q": 1}}`},
		{&ToolResultFrame{CallID: "c-1", Status: chatprotocol.ToolResultOK, Output: json.RawMessage(`[1]`)}, `{"type":"tool_result","callId":"c-1","status":"ok","output":[1]}`},
		{&ToolResultFrame{}, `{"type":"tool_result"}`},
		{&TokenFrame{Content: "x"}, `{"type":"token","content":"x"}`},
		{&AppFrame{Type: "products", Raw: json.RawMessage(`{"type":"products","n":1}`)}, `{"type":"products","n":1}`},
	}
	for _, tt := range tests {
		got, err := MarshalChatEvent(tt.f)
		require.NoError(t, err, tt.want)
		assert.Equal(t, tt.want, string(got))
		m, ok := tt.f.(json.Marshaler)
		require.True(t, ok)
		viaMethod, err := m.MarshalJSON()
		require.NoError(t, err)
		assert.Equal(t, tt.want, string(viaMethod))
	}
}
