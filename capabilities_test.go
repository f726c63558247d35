package chatprotocol

import (
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRequireChatCapabilitiesNamesEveryMissingOne(t *testing.T) {
	light := &ChatCapabilities{ConnectionReplay: true}
	require.NoError(t, RequireChatCapabilities(light, CapabilityConnectionReplay))
	require.NoError(t, RequireChatCapabilities(nil))

	err := RequireChatCapabilities(light, CapabilityInterruptedTurnRecovery, CapabilityConnectionReplay, CapabilityPersistedHistory, CapabilityInterruptedTurnRecovery, "teleport")
	require.ErrorIs(t, err, refusal.ErrUnsupportedCapability)
	missing, ok := errorsAsMissing(err)
	require.True(t, ok)
	assert.Equal(t, []Capability{CapabilityInterruptedTurnRecovery, CapabilityPersistedHistory, "teleport"}, missing.Missing)
	assert.Contains(t, err.Error(), "interruptedTurnRecovery, persistedHistory, teleport")

	err = RequireChatCapabilities(nil, CapabilityConnectionReplay)
	require.ErrorIs(t, err, refusal.ErrUnsupportedCapability)
}

func TestCapabilitiesAreIndependent(t *testing.T) {
	for _, c := range AllCapabilities() {
		var decl ChatCapabilities
		setCapability(&decl, c)
		for _, other := range AllCapabilities() {
			assert.Equal(t, c == other, decl.Has(other), "declaring %s alone", c)
		}
	}
	history := &ChatCapabilities{PersistedHistory: true}
	require.ErrorIs(t, RequireChatCapabilities(history, CapabilityInterruptedTurnRecovery), refusal.ErrUnsupportedCapability,
		"persisted history never implies restart recovery")
}

// setCapability declares c in d through its JSON form, so that the test
// also proves each capability's member name.
func setCapability(d *ChatCapabilities, c Capability) {
	in := `{"connectionReplay":false,"persistedHistory":false,"persistedDecisions":false,"completedToolCheckpoints":false,"interruptedTurnRecovery":false}`
	in = replaceOnce(in, `"`+string(c)+`":false`, `"`+string(c)+`":true`)
	got, err := ParseChatCapabilities([]byte(in))
	if err != nil {
		panic(err)
	}
	*d = got
}

func TestParseChatCapabilities(t *testing.T) {
	in := `{"connectionReplay":true,"persistedHistory":false,"persistedDecisions":true,"completedToolCheckpoints":false,"interruptedTurnRecovery":false,"teleport":{"since":2}}`
	c, err := ParseChatCapabilities([]byte(in))
	require.NoError(t, err)
	assert.True(t, c.ConnectionReplay)
	assert.True(t, c.PersistedDecisions)
	assert.False(t, c.PersistedHistory)
	require.Len(t, c.Unknown, 1)
	out, err := c.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, in, string(out))

	for in, path := range map[string]string{
		`{"connectionReplay":true}`: "/persistedHistory",
		`{"connectionReplay":1,"persistedHistory":false,"persistedDecisions":true,"completedToolCheckpoints":false,"interruptedTurnRecovery":false}`: "/connectionReplay",
	} {
		_, err := ParseChatCapabilities([]byte(in))
		require.ErrorIs(t, err, refusal.ErrInvalidEvent, in)
		assert.Equal(t, path, err.(*refusal.Error).Path)
	}
	_, err = ParseChatCapabilities([]byte(`{"ConnectionReplay":true,"connectionReplay":true,"persistedHistory":false,"persistedDecisions":true,"completedToolCheckpoints":false,"interruptedTurnRecovery":false}`))
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	_, err = ParseChatCapabilities([]byte(`{"connectionReplay":true,"persistedHistory":false,"persistedDecisions":true,"completedToolCheckpoints":false,"interruptedTurnRecovery":false} {}`))
	require.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
}
