package replaytest_test

import (
	"context"
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
		NewSubject: func(context.Context) (replaytest.Subject, error) {
			return replaytest.Subject{Window: wrap(replay.NewMemory(nil))}, nil
		},
		NewRetaining: func(_ context.Context, maxFrames int) (replaytest.Subject, error) {
			return replaytest.Subject{Window: wrap(replay.NewMemory(&replay.MemoryOptions{MaxFrames: maxFrames}))}, nil
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
	err := replaytest.Check(t.Context(), config(func(w replay.Window) replay.Window { return w }, 0))
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
		{"turn-keyed", replaytest.Config{NewSubject: func(context.Context) (replaytest.Subject, error) {
			return replaytest.Subject{Window: newTurnKeyed()}, nil
		}, Timeout: brokenTimeout}, []string{"isolation"}},
		{"lower-off-by-one", config(func(w replay.Window) replay.Window { return lowerOffByOne{w} }, brokenTimeout),
			[]string{"append-read", "retention"}},
		{"whole-suffix", config(func(w replay.Window) replay.Window { return wholeSuffix{w} }, brokenTimeout),
			[]string{"read-pages"}},
		{"bounds-at-cursor-zero", config(func(w replay.Window) replay.Window { return boundsAtCursorZero{w} }, brokenTimeout),
			[]string{"retention"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := replaytest.Check(t.Context(), c.cfg)
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

func TestCheckWithoutNewSubjectFails(t *testing.T) {
	err := replaytest.Check(t.Context(), replaytest.Config{})
	assert.ElementsMatch(t, replaytest.CheckNames(), failedChecks(err), "every check fails without a subject")
}

// The kit closes each subject once its check is done, the retaining ones
// included, and reports a constructor's error as the check's failure.
func TestCheckClosesEverySubject(t *testing.T) {
	var opened, closed int
	subject := func(w replay.Window) (replaytest.Subject, error) {
		opened++
		return replaytest.Subject{Window: w, Close: func() { closed++ }}, nil
	}
	cfg := replaytest.Config{
		NewSubject: func(context.Context) (replaytest.Subject, error) { return subject(replay.NewMemory(nil)) },
		NewRetaining: func(_ context.Context, maxFrames int) (replaytest.Subject, error) {
			return subject(replay.NewMemory(&replay.MemoryOptions{MaxFrames: maxFrames}))
		},
	}
	require.NoError(t, replaytest.Check(t.Context(), cfg))
	assert.Equal(t, len(replaytest.CheckNames()), opened, "one subject per check")
	assert.Equal(t, opened, closed, "every subject closed")

	errNoDB := errors.New("no database")
	cfg.NewSubject = func(context.Context) (replaytest.Subject, error) { return replaytest.Subject{}, errNoDB }
	err := replaytest.Check(t.Context(), cfg)
	assert.ErrorIs(t, err, errNoDB)
	assert.NotContains(t, failedChecks(err), "retention", "the retaining constructor still works")
	assert.Len(t, failedChecks(err), len(replaytest.CheckNames())-1)
}
