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
		// Types the strict parser could not tell from a type of section 6
		// or from each other:
		"Delta":               refusal.CodeUnsupportedEvent,
		"DELTA":               refusal.CodeUnsupportedEvent,
		"\u017fsession":       refusal.CodeUnsupportedEvent, // U+017F folds to s
		"line\u2028separator": refusal.CodeUnsupportedEvent,
		"zero\u200bwidth":     refusal.CodeUnsupportedEvent,
		"\ufeffproducts":      refusal.CodeUnsupportedEvent,
		"products\xff":        refusal.CodeUnsupportedEvent,
		"cartMutate":          refusal.CodeUnsupportedEvent,
		"with space":          refusal.CodeUnsupportedEvent,
		"with:colon":          refusal.CodeUnsupportedEvent,
		"\uff50roducts":       refusal.CodeUnsupportedEvent, // full-width p, NFKC-equal to products
	} {
		_, err := NewRegistry(map[string]Channel{typ: ChannelEvent})
		assert.Equal(t, code, refusal.CodeOf(err), "%q", typ)
	}
	reg, err := NewRegistry(map[string]Channel{"cart_mutate": ChannelState, "v2.products-list": ChannelEvent, "x9": ChannelTransient})
	require.NoError(t, err, "lower-case letters, digits, '_', '.' and '-'")
	assert.Equal(t, []string{"cart_mutate", "v2.products-list", "x9"}, reg.Types())
	_, err = NewRegistry(map[string]Channel{"products": 0})
	require.ErrorIs(t, err, refusal.ErrInvalidEvent)
	_, err = NewRegistry(map[string]Channel{"products": 9})
	require.ErrorIs(t, err, refusal.ErrInvalidEvent)
}
