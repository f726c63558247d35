package chatprotocol

import (
	"testing"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNegotiateChatVersion(t *testing.T) {
	accept := map[string]ChatVersion{"0": ChatVersionLegacy0, "1": ChatVersion1, " 1 ": ChatVersion1, "1.0": ChatVersion1, "0.0": ChatVersionLegacy0, "1e0": ChatVersion1, "-0": ChatVersionLegacy0}
	for in, want := range accept {
		got, err := NegotiateChatVersion([]byte(in))
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "  ", "null", "2", "3", `"1"`, "true", "0.5", "-1", "1.5", "01", "[1]", "{}", "1 1", "1e400", "NaN", "1.0000000000000001", "\ufeff1"} {
		_, err := NegotiateChatVersion([]byte(in))
		require.ErrorIs(t, err, refusal.ErrUnsupportedVersion, "%q", in)
	}
	_, err := NegotiateChatVersion(nil)
	require.ErrorIs(t, err, refusal.ErrUnsupportedVersion)
	_, err = NegotiateChatVersion([]byte(hugeFraction))
	require.ErrorIs(t, err, refusal.ErrUnsupportedVersion, "a fraction whose exponent is longer than its zeros is not 1")
}

func TestChatVersionString(t *testing.T) {
	assert.Equal(t, "legacy0", ChatVersionLegacy0.String())
	assert.Equal(t, "1", ChatVersion1.String())
	assert.Equal(t, "unsupported", ChatVersion(2).String())
}
