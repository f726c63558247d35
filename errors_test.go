package chatprotocol_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

func TestCodesAreDistinctAndRoundTrip(t *testing.T) {
	seen := map[chatprotocol.Code]bool{}
	for _, c := range chatprotocol.Codes() {
		require.NotEmpty(t, c)
		require.False(t, seen[c], "code %q listed twice", c)
		seen[c] = true

		err := fmt.Errorf("wrapped: %w", &chatprotocol.Error{Code: c, Path: "/seq", Message: "m"})
		assert.Equal(t, c, chatprotocol.CodeOf(err))
		assert.ErrorIs(t, err, &chatprotocol.Error{Code: c})
		got, ok := errors.AsType[*chatprotocol.Error](err)
		require.True(t, ok)
		assert.Equal(t, "/seq", got.Path)
	}
	assert.Equal(t, chatprotocol.Code(""), chatprotocol.CodeOf(nil))
	assert.Equal(t, chatprotocol.Code(""), chatprotocol.CodeOf(errors.New("plain")))
}

func TestSentinelsMatchOnlyTheirCode(t *testing.T) {
	err := &chatprotocol.Error{Code: chatprotocol.CodeSequenceGap, Path: "/seq"}
	assert.ErrorIs(t, err, chatprotocol.ErrSequenceGap)
	assert.NotErrorIs(t, err, chatprotocol.ErrSequenceReordered)
	// A non-sentinel target is compared by identity.
	other := &chatprotocol.Error{Code: chatprotocol.CodeSequenceGap, Message: "x"}
	assert.NotErrorIs(t, err, other)
	assert.ErrorIs(t, other, other)
}

func TestErrorUnwrapsCause(t *testing.T) {
	cause := errors.New("disk full")
	err := &chatprotocol.Error{Code: chatprotocol.CodeFrameTooLarge, Err: cause}
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, "frame-too-large: disk full", err.Error())
}

// TestErrorAliasDocNamesEveryField: go doc shows Error as an alias of an
// internal type, without its fields; its comment lists them.
func TestErrorAliasDocNamesEveryField(t *testing.T) {
	assertDocNamesFields(t, aliasDocs(t, "errors.go"), "Error", reflect.TypeFor[chatprotocol.Error]())
}
