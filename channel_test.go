package chatprotocol_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

func TestChannelString(t *testing.T) {
	assert.Equal(t, "event", chatprotocol.ChannelEvent.String())
	assert.Equal(t, "state", chatprotocol.ChannelState.String())
	assert.Equal(t, "transient", chatprotocol.ChannelTransient.String())
	assert.Equal(t, "invalid", chatprotocol.Channel(0).String())
	assert.Equal(t, "invalid", chatprotocol.Channel(9).String())
}
