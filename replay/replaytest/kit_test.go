package replaytest_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/replay/replaytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// config is the kit's configuration for windows wrap makes around a
// Memory, with timeout (0: the kit's default).
func config(wrap func(replay.Window) replay.Window, timeout time.Duration) replaytest.Config {
	return replaytest.Config{
		NewWindow: func(*testing.T) replay.Window { return wrap(replay.NewMemory(nil)) },
		NewRetaining: func(_ *testing.T, maxFrames int) replay.Window {
			return wrap(replay.NewMemory(&replay.MemoryOptions{MaxFrames: maxFrames}))
		},
		Timeout: timeout,
	}
}

// brokenTimeout is the Timeout of the broken windows' runs: short, since
// their Waits may hang until it passes.
const brokenTimeout = 2 * time.Second

func failedChecks(err error) []string {
	var names []string
	if join, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range join.Unwrap() {
			if ce, ok := errors.AsType[*replaytest.CheckError](e); ok {
				names = append(names, ce.Check)
			}
		}
	}
	return names
}

func TestCheckPassesMemory(t *testing.T) {
	err := replaytest.Check(t, config(func(w replay.Window) replay.Window { return w }, 0))
	assert.NoError(t, err)
}

// TestCheckFailsEachBrokenWindow shows that the kit fails each
// known-broken window, at the checks aimed at its defect.
func TestCheckFailsEachBrokenWindow(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  replaytest.Config
		want []string
	}{
		{"lost-wakeup", config(func(w replay.Window) replay.Window { return lostWakeup{w} }, brokenTimeout),
			[]string{"wait-lost-wakeup"}},
		{"turn-keyed", replaytest.Config{NewWindow: func(*testing.T) replay.Window { return newTurnKeyed() }, Timeout: brokenTimeout},
			[]string{"isolation"}},
		{"lower-off-by-one", config(func(w replay.Window) replay.Window { return lowerOffByOne{w} }, brokenTimeout),
			[]string{"append-read", "retention"}},
		{"whole-suffix", config(func(w replay.Window) replay.Window { return wholeSuffix{w} }, brokenTimeout),
			[]string{"read-pages"}},
		{"bounds-at-cursor-zero", config(func(w replay.Window) replay.Window { return boundsAtCursorZero{w} }, brokenTimeout),
			[]string{"retention"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := replaytest.Check(t, c.cfg)
			require.Error(t, err)
			failed := failedChecks(err)
			t.Logf("failed checks: %v", failed)
			for _, name := range c.want {
				assert.Contains(t, failed, name)
			}
		})
	}
}

func TestCheckNamesAreUnique(t *testing.T) {
	names := replaytest.CheckNames()
	assert.Len(t, names, 15)
	seen := map[string]bool{}
	for _, n := range names {
		assert.False(t, seen[n], "duplicate %s", n)
		seen[n] = true
	}
}

func TestCheckWithoutNewWindowFails(t *testing.T) {
	assert.Error(t, replaytest.Check(t, replaytest.Config{}))
}
