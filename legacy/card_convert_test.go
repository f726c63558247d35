package legacy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

// TestCardUpgradeAndEncodeBack: a card frame whose members version 1 keeps
// (no zero values) upgrades to a card event holding the dataSchemaJson
// object's text, and encodes back to the same frame, the object included.
func TestCardUpgradeAndEncodeBack(t *testing.T) {
	frame := `{"type":"card","card":{"correlationId":"k-1","createdAt":1764500001000,"prompt":"How many?",` +
		`"presentation":{"kind":"slider","min":1,"max":9,"step":0.5},"allowDecline":true,"timeoutMs":60000,` +
		`"fallbackText":"Say a number","report":{"plans":[{"title":"Plan","items":[{"text":"one","ref":"wi:1"}]}],"title":"T"},` +
		`"dataSchemaJson":{"type":"object","required":["value"]}}}`
	envs, err := upgrade(t, frame, Scout, NewStreamHost(&StreamHostOptions{ConversationID: "c"}))
	require.NoError(t, err)
	require.Len(t, envs, 1)
	card := envs[0].Event.(*chatprotocol.CardEvent).Card
	assert.Equal(t, `{"type":"object","required":["value"]}`, card.DataSchemaJSON)
	assert.Equal(t, int64(60000), card.TimeoutMs)
	require.NoError(t, chatprotocol.ValidateOpenCardSnapshot(card))

	back, err := EncodeLegacyChatFrame(envs[0], Scout)
	require.NoError(t, err)
	out, err := MarshalChatEvent(back)
	require.NoError(t, err)
	assert.JSONEq(t, frame, string(out))
}

// TestCardEncodeLeavesZeroValuesAbsent: version 1 holds an absent optional
// member as its zero value, so the legacy card it encodes to lacks it.
func TestCardEncodeLeavesZeroValuesAbsent(t *testing.T) {
	env := envelope(t, `{"type":"card","card":{"correlationId":"k","createdAt":5,"prompt":"Sure?","allowDecline":false,"timeoutMs":0}}`)
	f, err := EncodeLegacyChatFrame(env, Scout)
	require.NoError(t, err)
	assert.Equal(t, &CardFrame{Card: Card{CorrelationID: "k", CreatedAt: 5, Prompt: "Sure?"}}, f)
}
