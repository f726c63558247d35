package teststream

import (
	"strings"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/sse"
)

func TestEventFrames(t *testing.T) {
	stream := ": connected\n\nid: 1\ndata: a\n\nevent: heartbeat\ndata: {\"tsMs\":1}\n\ndata: b\ndata: c\n\nid: 3\ndata: unfinished"
	ids, data, err := EventFrames(strings.NewReader(stream))
	require.NoError(t, err)
	assert.Equal(t, []string{"1", "1"}, ids)
	assert.Equal(t, [][]byte{[]byte("a"), []byte("b\nc")}, data)

	_, data, err = EventFrames(strings.NewReader("data: x\n\ndata: " + strings.Repeat("y", sse.DefaultMaxFrameBytes) + "\n\n"))
	assert.ErrorIs(t, err, refusal.ErrFrameTooLarge)
	assert.Equal(t, [][]byte{[]byte("x")}, data)
}
