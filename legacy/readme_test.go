package legacy_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/legacy"
)

// readmeText is the README's first legacy code, verbatim between the
// markers: text gathers the token frames.
func readmeText(data []byte, text string) string {
	// README:begin
	switch f := legacy.ParseChatEvent(data).(type) {
	case *legacy.TokenFrame:
		text += f.Content
	case *legacy.AppFrame: // products, cart_mutate …: kept whole in f.Raw
	}
	// README:end
	return text
}

// readmeAdapters is the README's second legacy code, verbatim between the
// markers: data upgraded into *envs, and env written back as a legacy
// frame into *out.
func readmeAdapters(ctx context.Context, data []byte, env chatprotocol.ChatEventEnvelope, products *chatprotocol.Registry, envs *[]chatprotocol.ChatEventEnvelope, out *[]byte) error {
	// README:begin
	host := legacy.NewStreamHost(&legacy.StreamHostOptions{Registry: products}) // conversation from the session frame, turn-1, e-N, turn-1-call-N
	frame, err := legacy.DecodeLegacyChatFrame(data, legacy.Scout)              // or legacy.Papercusp
	if err != nil {
		return err
	}
	upgraded, err := legacy.UpgradeLegacyChatFrame(ctx, frame, host) // error gives two envelopes: error, lifecycle failed
	if err != nil {
		return err
	}
	old, err := legacy.EncodeLegacyChatFrame(env, legacy.Scout) // unsupported-event where no legacy form exists
	if err != nil {
		return err
	}
	written, err := legacy.MarshalChatEvent(old) // the frame's bytes
	// README:end
	*envs, *out = upgraded, written
	return err
}

func TestReadmeLegacy(t *testing.T) {
	assert.Equal(t, "Hel", readmeText([]byte(`{"type":"token","content":"l"}`), "He"))
	env := chatprotocol.ChatEventEnvelope{ConversationID: "c-1", TurnID: "t-1", EventID: "e-1", Seq: 1, Event: &chatprotocol.DeltaEvent{Text: "Hi"}}
	var envs []chatprotocol.ChatEventEnvelope
	var out []byte
	require.NoError(t, readmeAdapters(t.Context(), []byte(`{"type":"session","sessionId":"s-1"}`), env, nil, &envs, &out))
	assert.Len(t, envs, 1)
	assert.JSONEq(t, `{"type":"token","content":"Hi"}`, string(out))
}
