package recovery_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/internal/wire"
	"github.com/Papercusp/chat-protocol-go/recovery"
)

func TestSentinelsCoverEveryCodeAndRoundTrip(t *testing.T) {
	leakCheck(t)
	sentinels := []*recovery.Error{
		recovery.ErrTurnNotRunning, recovery.ErrUnauthorized, recovery.ErrClaimConflict,
		recovery.ErrNeedsReconciliation, recovery.ErrCheckpointWriteFailed,
		recovery.ErrAdmissionUnavailable, recovery.ErrUnknownEffect, recovery.ErrInvalidTurn,
		recovery.ErrStoreUnavailable, recovery.ErrStaleCursor, recovery.ErrCursorAhead,
		recovery.ErrSequenceGap, recovery.ErrSequenceReordered, recovery.ErrForeignFrame,
	}
	all := wire.Codes()
	seen := map[recovery.Code]bool{}
	for _, s := range sentinels {
		require.NotEmpty(t, s.Code)
		assert.False(t, seen[s.Code], "two sentinels for %s", s.Code)
		seen[s.Code] = true
		assert.True(t, slices.Contains(all, s.Code), "%s missing from wire.Codes()", s.Code)
		err := fmt.Errorf("ctx: %w", &recovery.Error{Code: s.Code, Message: "m"})
		assert.ErrorIs(t, err, s)
		assert.Equal(t, s.Code, recovery.CodeOf(err))
		for _, other := range sentinels {
			if other != s {
				assert.NotErrorIs(t, err, other)
			}
		}
	}
	// The recovery section of the codes: every one has a sentinel here.
	for _, c := range []recovery.Code{recovery.CodeTurnNotRunning, recovery.CodeUnauthorized, recovery.CodeClaimConflict,
		recovery.CodeNeedsReconciliation, recovery.CodeCheckpointWriteFailed, recovery.CodeAdmissionUnavailable,
		recovery.CodeUnknownEffect, recovery.CodeInvalidTurn, recovery.CodeStoreUnavailable} {
		assert.True(t, seen[c], "no sentinel for %s", c)
	}
	assert.Equal(t, recovery.Code(""), recovery.CodeOf(errors.New("plain")))
}
