package sse_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/sse"
)

func TestSentinelsMatchTheRootPackage(t *testing.T) {
	cases := []struct {
		code     sse.Code
		sentinel error
	}{
		{sse.CodeFrameTooLarge, sse.ErrFrameTooLarge},
		{sse.CodeInvalidFrame, sse.ErrInvalidFrame},
	}
	for _, tc := range cases {
		err := fmt.Errorf("wrapped: %w", &sse.Error{Code: tc.code, Message: "m"})
		assert.ErrorIs(t, err, tc.sentinel)
		assert.ErrorIs(t, err, &chatprotocol.Error{Code: tc.code})
		assert.Equal(t, tc.code, chatprotocol.CodeOf(err))
		assert.Contains(t, chatprotocol.Codes(), tc.code)
	}
	assert.ErrorIs(t, sse.ErrFrameTooLarge, chatprotocol.ErrFrameTooLarge)
	assert.NotErrorIs(t, sse.ErrInvalidFrame, sse.ErrFrameTooLarge)
	_, isRefusal := errors.AsType[*sse.Error](sse.ErrClosed)
	require.False(t, isRefusal)
}
