package turnsink_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/internal/turnsink"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func TestEnvelopes(t *testing.T) {
	var lines []string
	state := chatprotocol.NewChatStateV1("c")
	s := turnsink.New("c", "t", func(env *chatprotocol.ChatEventEnvelope) error {
		b, err := env.AppendJSON(nil)
		lines = append(lines, string(b))
		if err != nil {
			return err
		}
		return state.Apply(*env)
	})
	ctx := context.Background()
	require.NoError(t, s.Provenance(ctx, "openai", "m", "r"))
	require.NoError(t, s.Delta(ctx, "Hi"))
	require.NoError(t, s.AnnounceToolCall(ctx, "call_1", "f", json.RawMessage(`{"a":1}`)))
	require.NoError(t, s.Usage(ctx, chatprotocol.Usage{TotalTokens: new(int64(7))}))
	require.NoError(t, s.Fail(ctx, "provider-overloaded", "overloaded", false))
	assert.Equal(t, []string{
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"t:1","seq":1,"event":{"type":"lifecycle","status":"started"}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"t:2","seq":2,"event":{"type":"provenance","provider":"openai","model":"m","requestId":"r"}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"t:3","seq":3,"event":{"type":"delta","text":"Hi"}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"t:4","seq":4,"event":{"type":"tool_call","callId":"call_1","name":"f","input":{"a":1}}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"t:5","seq":5,"event":{"type":"error","code":"provider-overloaded","message":"overloaded","retryable":false}}`,
		`{"schemaVersion":1,"conversationId":"c","turnId":"t","eventId":"t:6","seq":6,"event":{"type":"lifecycle","status":"failed","usage":{"totalTokens":7}}}`,
	}, lines)
	assert.ErrorIs(t, s.Delta(ctx, "late"), refusal.ErrTurnTerminated, "nothing after the end")
	assert.NoError(t, s.Complete(ctx, ""), "the end of an ended turn changes nothing")
	assert.Len(t, lines, 6)
}

func TestLongDeltaIsSplit(t *testing.T) {
	var texts []string
	s := turnsink.New("c", "t", func(env *chatprotocol.ChatEventEnvelope) error {
		if _, err := env.AppendJSON(nil); err != nil {
			return err
		}
		if d, ok := env.Event.(*chatprotocol.DeltaEvent); ok {
			texts = append(texts, d.Text)
		}
		return nil
	})
	long := strings.Repeat("é", chatprotocol.DefaultMaxFrameBytes/2)
	require.NoError(t, s.Delta(context.Background(), long))
	assert.Greater(t, len(texts), 1)
	assert.Equal(t, long, strings.Join(texts, ""))
}
