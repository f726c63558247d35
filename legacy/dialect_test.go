package legacy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDialectNames(t *testing.T) {
	for _, d := range []Dialect{Scout, Papercusp} {
		got, ok := ParseDialect(d.String())
		require.True(t, ok, d.String())
		assert.Equal(t, d, got)
	}
	assert.Equal(t, "scout", Scout.String())
	assert.Equal(t, "papercusp", Papercusp.String())
	assert.Equal(t, "invalid", Dialect(0).String())
	for _, name := range []string{"", "Scout", "invalid", "papercup"} {
		_, ok := ParseDialect(name)
		assert.False(t, ok, name)
	}
}
