package interactions_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
)

// Every code the resolver returns has a sentinel that matches exactly that
// code, and is listed in the module's Codes.
func TestSentinels(t *testing.T) {
	sentinels := map[interactions.Code]*interactions.Error{
		interactions.CodeCardNotFound: interactions.ErrCardNotFound, interactions.CodeCardExists: interactions.ErrCardExists,
		interactions.CodeDuplicateAnswer: interactions.ErrDuplicateAnswer, interactions.CodeAlreadyAnswered: interactions.ErrAlreadyAnswered,
		interactions.CodeAnswerExpired: interactions.ErrAnswerExpired, interactions.CodeCardCancelled: interactions.ErrCardCancelled,
		interactions.CodeCardSuperseded: interactions.ErrCardSuperseded, interactions.CodeStaleRevision: interactions.ErrStaleRevision,
		interactions.CodeSchemaMismatch: interactions.ErrSchemaMismatch, interactions.CodeInvalidAnswer: interactions.ErrInvalidAnswer,
		interactions.CodeUnknownSchema: interactions.ErrUnknownSchema, interactions.CodeNotExpired: interactions.ErrNotExpired,
		interactions.CodeStoreUnavailable: interactions.ErrStoreUnavailable, interactions.CodeUnauthorized: interactions.ErrUnauthorized,
		interactions.CodeNeedsReconciliation: interactions.ErrNeedsReconciliation, interactions.CodeCheckpointWriteFailed: interactions.ErrCheckpointWriteFailed,
		interactions.CodeUnsupportedVersion: interactions.ErrUnsupportedVersion, interactions.CodeInvalidCard: interactions.ErrInvalidCard,
		interactions.CodeFrameTooLarge: interactions.ErrFrameTooLarge,
	}
	all := chatprotocol.Codes()
	for code, sentinel := range sentinels {
		assert.Equal(t, code, sentinel.Code)
		assert.Contains(t, all, code)
		err := fmt.Errorf("wrapped: %w", &interactions.Error{Code: code, Message: "m"})
		assert.ErrorIs(t, err, sentinel)
		assert.Equal(t, code, interactions.CodeOf(err))
		for other, s := range sentinels {
			if other != code {
				assert.NotErrorIs(t, err, s)
			}
		}
	}
	// The type is the root package's: a host can mix the two.
	var e *chatprotocol.Error = interactions.ErrCardNotFound
	assert.NotNil(t, e)
}
