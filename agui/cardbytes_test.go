package agui_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// TestCardReachesTheRunAsStored: the card's CUSTOM event and the
// interrupt of the card still open at the run's end carry the card's
// bytes as the window stores them, its unknown member and its <, > and &
// included (docs/contract.md section 18.2); so does the card_closed event
// of another card, and the interrupt's message is the prompt unescaped.
func TestCardReachesTheRunAsStored(t *testing.T) {
	other := strings.ReplaceAll(turnscript.NewerCard, "card-1", "card-2")
	turn, err := turnscript.Parse(replay.Key{ConversationID: "thread-1", TurnID: "t-1"},
		`{"type":"lifecycle","status":"started"}`,
		`{"type":"card","card":`+turnscript.NewerCard+`}`,
		`{"type":"card","card":`+other+`}`,
		`{"type":"card_closed","correlationId":"card-2","outcome":"x < y & z"}`,
		`{"type":"lifecycle","status":"completed"}`)
	require.NoError(t, err)
	stored, err := replay.EncodeFrame(turn[1], 0)
	require.NoError(t, err)
	require.Contains(t, string(stored.Data), `"card":`+turnscript.StoredCard+`}`)

	body := string(bridge.Serve(t, turn))
	assert.Contains(t, body, `data: {"type":"CUSTOM","name":"chatprotocol.card","value":`+turnscript.StoredCard+"}\n\n")
	assert.Contains(t, body, `data: {"type":"CUSTOM","name":"chatprotocol.card","value":`+strings.ReplaceAll(turnscript.StoredCard, "card-1", "card-2")+"}\n\n")
	assert.Contains(t, body, `data: {"type":"CUSTOM","name":"chatprotocol.card_closed","value":{"type":"card_closed","correlationId":"card-2","outcome":"x < y & z"}}`+"\n\n")
	assert.Contains(t, body, `"outcome":{"type":"interrupt","interrupts":[{"id":"card-1","reason":"chatprotocol.card","message":"Pick <one> & go é",`)
	assert.Contains(t, body, `"metadata":{"chatprotocol":{"card":`+turnscript.StoredCard+`}}}]}`)
	assert.Equal(t, 1, strings.Count(body, `"reason":"chatprotocol.card"`), "card-2 is closed: one interrupt")
}
