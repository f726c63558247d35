package chatprotocol

import (
	"strings"
	"testing"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRegistryChannels(t *testing.T) {
	types := map[string]Channel{"products": ChannelEvent, "cart_mutate": ChannelState, "open_drawer": ChannelTransient}
	reg, err := NewRegistry(types)
	require.NoError(t, err)
	types["late"] = ChannelEvent // the registry copied the map
	for typ, want := range map[string]Channel{"products": ChannelEvent, "cart_mutate": ChannelState, "open_drawer": ChannelTransient, "delta": ChannelEvent, "navigate": ChannelTransient} {
		ch, ok := reg.Channel(typ)
		require.True(t, ok, typ)
		assert.Equal(t, want, ch, typ)
	}
	_, ok := reg.Channel("late")
	assert.False(t, ok)
	assert.Equal(t, []string{"cart_mutate", "open_drawer", "products"}, reg.Types())
	assert.Equal(t, "cart_mutate=state open_drawer=transient products=event", reg.String())

	var none *Registry
	_, ok = none.Channel("products")
	assert.False(t, ok)
	ch, ok := none.Channel("card")
	assert.True(t, ok)
	assert.Equal(t, ChannelState, ch)
	assert.Nil(t, none.Types())
}

func TestNewRegistryRefusals(t *testing.T) {
	for typ, code := range map[string]refusal.Code{
		"":                       refusal.CodeUnsupportedEvent,
		strings.Repeat("p", 257): refusal.CodeUnsupportedEvent,
		"bad\nname":              refusal.CodeUnsupportedEvent,
		"delta":                  refusal.CodeUnsupportedEvent,
		"capabilities":           refusal.CodeUnsupportedEvent,
		"token":                  refusal.CodeUnsupportedEvent,
		"tool_start":             refusal.CodeUnsupportedEvent,
		"done":                   refusal.CodeUnsupportedEvent,
		"heartbeat":              refusal.CodeUnsupportedEvent, // an EnvelopeReader would skip its events
	} {
		_, err := NewRegistry(map[string]Channel{typ: ChannelEvent})
		assert.Equal(t, code, refusal.CodeOf(err), "%q", typ)
	}
	_, err := NewRegistry(map[string]Channel{"products": 0})
	require.ErrorIs(t, err, refusal.ErrInvalidEvent)
	_, err = NewRegistry(map[string]Channel{"products": 9})
	require.ErrorIs(t, err, refusal.ErrInvalidEvent)
}
