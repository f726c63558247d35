package chatprotocol_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// readmeEnvelope is the README's "Version-1 envelopes" code, verbatim
// between the markers: the refusal code of frame, "" for a frame read.
func readmeEnvelope(frame []byte, state *chatprotocol.ChatStateV1) refusal.Code {
	// README:begin
	env, err := chatprotocol.ParseEnvelope(frame) // strict: one meaning per frame, refusals carry a code and a JSON pointer
	if err != nil {
		return refusal.CodeOf(err) // e.g. unsupported-version, sequence-gap, missing-call-id
	}
	if err := state.Apply(env); err != nil {
		return refusal.CodeOf(err) // foreign-frame, sequence-gap, turn-terminated …
	}
	line, _ := env.MarshalJSON() // canonical one-line form, unknown members kept
	// README:end
	_ = line
	return ""
}

func TestReadmeEnvelope(t *testing.T) {
	state := chatprotocol.NewChatStateV1("c-1")
	frame := `{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":"Hel"}}`
	assert.Equal(t, refusal.Code(""), readmeEnvelope([]byte(frame), state))
	assert.Equal(t, refusal.CodeUnsupportedVersion, readmeEnvelope([]byte(`{"type":"token"}`), state))
	assert.Equal(t, refusal.CodeForeignFrame, readmeEnvelope([]byte(`{"schemaVersion":1,"conversationId":"c-2","turnId":"t-1","eventId":"e-2","seq":2,"event":{"type":"delta","text":"lo"}}`), state))
}
