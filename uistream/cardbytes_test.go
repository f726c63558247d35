package uistream_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// TestCardReachesTheStreamAsStored: the open and the closed data-card
// parts carry the card's bytes as the window stores them, its unknown
// member and its <, > and & included (docs/contract.md section 18.1).
func TestCardReachesTheStreamAsStored(t *testing.T) {
	turn, err := turnscript.Parse(replay.Key{ConversationID: "chat-1", TurnID: "t-1"},
		`{"type":"lifecycle","status":"started"}`,
		`{"type":"card","card":`+turnscript.NewerCard+`}`,
		`{"type":"card_closed","correlationId":"card-1","outcome":"answered"}`,
		`{"type":"lifecycle","status":"completed"}`)
	require.NoError(t, err)
	stored, err := replay.EncodeFrame(turn[1], 0)
	require.NoError(t, err)
	require.Contains(t, string(stored.Data), `"card":`+turnscript.StoredCard+`}`)

	body := string(bridge.Serve(t, turn))
	assert.Contains(t, body, `data: {"type":"data-card","id":"card-1","data":{"status":"open","card":`+turnscript.StoredCard+"}}\n\n")
	assert.Contains(t, body, `data: {"type":"data-card","id":"card-1","data":{"status":"closed","card":`+turnscript.StoredCard+`,"outcome":"answered"}}`+"\n\n")
}
