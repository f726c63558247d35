package chatprotocol

import (
	"encoding/json"
	"testing"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestIsCaseVariant(t *testing.T) {
	known := []string{"type", "seq", "kelvin"}
	for name, want := range map[string]bool{
		"type": false, "TYPE": true, "Type": true, "seq": false, "ſeq": true, "SEQ": true,
		"\u212aelvin": true, // KELVIN SIGN folds to k
		"typeſ":       false, "type\x00": false, "types": false, "": false,
	} {
		assert.Equal(t, want, isCaseVariant([]byte(name), known), "%q", name)
	}
}

func TestUnknownMembersAreKeptInOrderAndReemitted(t *testing.T) {
	in := `{"schemaVersion":1,"z":1,"conversationId":"c-1","a":{"deep":[true]},"turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":"x","m~/n":"é"}}`
	env, err := ParseEnvelope([]byte(in))
	require.NoError(t, err)
	require.Len(t, env.Unknown, 2)
	assert.Equal(t, "z", env.Unknown[0].Name)
	assert.Equal(t, "a", env.Unknown[1].Name)
	assert.JSONEq(t, `{"deep":[true]}`, string(env.Unknown[1].Value))
	delta := env.Event.(*DeltaEvent)
	require.Len(t, delta.Unknown, 1)
	assert.Equal(t, "m~/n", delta.Unknown[0].Name)
	out, err := env.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"schemaVersion":1,"conversationId":"c-1","turnId":"t-1","eventId":"e-1","seq":1,"event":{"type":"delta","text":"x","m~/n":"é"},"z":1,"a":{"deep":[true]}}`, string(out))

	delta.Unknown = append(delta.Unknown, Member{Name: "added", Value: json.RawMessage(" [ 1 ,2 ] ")})
	out, err = env.MarshalJSON()
	require.NoError(t, err)
	assert.Contains(t, string(out), `"m~/n":"é","added":[1,2]}`, "a kept value is written without whitespace")

	delta.Unknown = []Member{{Name: "bad/name", Value: json.RawMessage(`{`)}}
	_, err = env.MarshalJSON()
	require.ErrorIs(t, err, refusal.ErrInvalidEvent)
	assert.Equal(t, "/event/bad~1name", err.(*refusal.Error).Path)
}
