package teststream

import (
	"bytes"
	"errors"
	"io"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/legacy"
)

// TestGenerateUpgradesWithoutViolation upgrades a generated stream through
// the legacy adapter the way chatwire decode does and requires every frame
// to apply, the turn to end completed, and the state to stay small without
// text.
func TestGenerateUpgradesWithoutViolation(t *testing.T) {
	for _, text := range []bool{true, false} {
		var buf bytes.Buffer
		require.NoError(t, Generate(&buf, 256<<10, 7, text))
		assert.GreaterOrEqual(t, buf.Len(), 256<<10)

		r := chatprotocol.NewEnvelopeReader(bytes.NewReader(buf.Bytes()), nil)
		host := legacy.NewStreamHost(nil)
		var state chatprotocol.ChatStateV1
		apps := 0
		for {
			ev, err := r.NextFrame()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			f, err := legacy.DecodeLegacyChatFrame(ev.Data, legacy.Scout)
			require.NoError(t, err, "frame %d", r.FrameNumber())
			if _, ok := f.(*legacy.AppFrame); ok {
				apps++
				continue
			}
			envs, err := legacy.UpgradeLegacyChatFrame(t.Context(), f, host)
			require.NoError(t, err, "frame %d", r.FrameNumber())
			for _, env := range envs {
				require.NoError(t, state.Apply(env), "frame %d", r.FrameNumber())
			}
		}
		assert.False(t, r.Truncated())
		assert.Positive(t, apps)
		turn, ok := state.Turn(legacy.DefaultTurnID)
		require.True(t, ok)
		assert.Equal(t, chatprotocol.LifecycleCompleted, turn.Status)
		assert.Empty(t, state.OpenCards(), "every card is closed")
		js, err := state.MarshalJSON()
		require.NoError(t, err)
		if text {
			assert.Greater(t, len(turn.Text()), 32<<10)
		} else {
			assert.Empty(t, turn.Text())
			assert.Less(t, len(js), 1024)
		}
	}
}
