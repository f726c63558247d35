package recovery_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func TestRefValidation(t *testing.T) {
	leakCheck(t)
	long := strings.Repeat("x", recovery.MaxIDBytes+1)
	max := strings.Repeat("x", recovery.MaxIDBytes)
	cases := []struct {
		name string
		ref  recovery.EffectRef
		path string
	}{
		{"valid", recovery.EffectRef{Turn: recovery.TurnRef{Conversation: max, Turn: "t"}, Effect: "e"}, ""},
		{"empty conversation", recovery.EffectRef{Turn: recovery.TurnRef{Turn: "t"}, Effect: "e"}, "/conversationId"},
		{"empty turn", recovery.EffectRef{Turn: recovery.TurnRef{Conversation: "c"}, Effect: "e"}, "/turnId"},
		{"empty effect", recovery.EffectRef{Turn: turn}, "/effectId"},
		{"long effect", recovery.EffectRef{Turn: turn, Effect: long}, "/effectId"},
		{"long turn", recovery.EffectRef{Turn: recovery.TurnRef{Conversation: "c", Turn: long}, Effect: "e"}, "/turnId"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.ref.Validate()
			if tc.path == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, refusal.ErrInvalidTurn)
			e, ok := err.(*refusal.Error)
			require.True(t, ok)
			assert.Equal(t, tc.path, e.Path)
		})
	}
}

func TestRecordHelpers(t *testing.T) {
	leakCheck(t)
	lease := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := recovery.TurnRecord{Turn: turn, Status: recovery.TurnCancelled, Effects: []recovery.EffectRecord{
		{ID: "a", Revision: 4, State: recovery.EffectCompleted, Result: result("r")},
		{ID: "b", Revision: 3, State: recovery.EffectAdmitted, Holder: "h", LeaseUntil: lease},
		{ID: "c", Revision: 4, State: recovery.EffectNeedsReconciliation},
		{ID: "d", Revision: 2, State: recovery.EffectClaimed},
		{ID: "e", Revision: 1, State: recovery.EffectPending},
	}}
	assert.Equal(t, []string{"b", "c"}, rec.InFlight())

	clone := rec.Clone()
	clone.Effects[0].Result.Data[0] = 'X'
	clone.Effects[1].State = recovery.EffectCompleted
	assert.Equal(t, "r", string(rec.Effects[0].Result.Data), "Clone shares result bytes")
	assert.Equal(t, recovery.EffectAdmitted, rec.Effects[1].State, "Clone shares effects")

	b, ok := rec.Effect("b")
	require.True(t, ok)
	same := b
	same.LeaseUntil = lease.In(time.FixedZone("x", 3600))
	assert.True(t, b.Equal(same), "Equal compares instants, not locations")
	same.Result = recovery.Result{Data: []byte{}}
	assert.True(t, b.Equal(same), "nil and empty results are equal")
	same.Revision++
	assert.False(t, b.Equal(same))
	_, ok = rec.Effect("zz")
	assert.False(t, ok)

	for _, s := range []recovery.TurnStatus{recovery.TurnCompleted, recovery.TurnFailed, recovery.TurnCancelled} {
		assert.True(t, s.Terminal(), s)
	}
	assert.False(t, recovery.TurnRunning.Terminal())
}
