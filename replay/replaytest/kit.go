package replaytest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// Config is the window under test and the kit's allowances. NewWindow is
// required; every other zero field means the default.
type Config struct {
	// NewWindow returns a window for one check, with the frame limit
	// MaxFrameBytes and a retention that holds at least the few hundred
	// frames of a check. t is the test the check runs in (its subtest
	// under TestWindow, Check's t under Check), for t.Cleanup.
	NewWindow func(t *testing.T) replay.Window
	// NewRetaining, when set, returns a window that retains exactly the
	// newest maxFrames frames of each turn once Append returns (count
	// retention, as replay.MemoryOptions.MaxFrames). Without it the
	// retention check is skipped.
	NewRetaining func(t *testing.T, maxFrames int) replay.Window
	// MaxFrameBytes is the frame limit of NewWindow's windows: 0 means
	// chatprotocol.DefaultMaxFrameBytes (1 MiB); negative means none, and
	// the frame-too-large check is skipped.
	MaxFrameBytes int
	// Timeout is how long a Wait that must return is given, and a whole
	// concurrent check: 0 means 10 s.
	Timeout time.Duration
	// Block is how long a Wait that must block is watched: 0 means 50 ms.
	Block time.Duration
	// Readers is the number of concurrent readers of the fan-out check: 0
	// means 200.
	Readers int
}

// CheckError is a failed check.
type CheckError struct {
	Check string
	Err   error
}

// Error names the failed check and its failure; the text is informative
// only.
func (e *CheckError) Error() string { return "replaytest: check " + e.Check + ": " + e.Err.Error() }

// Unwrap returns the failure.
func (e *CheckError) Unwrap() error { return e.Err }

// errSkip marks a check the configuration does not allow.
var errSkip = errors.New("replaytest: check skipped")

type check struct {
	name string
	run  func(r *run) error
}

// checks is the kit, in order.
func checks() []check {
	return []check{
		{"empty-turn", checkEmptyTurn},
		{"append-read", checkAppendRead},
		{"cursor-ahead", checkCursorAhead},
		{"append-refusals", checkAppendRefusals},
		{"frame-too-large", checkFrameTooLarge},
		{"ended", checkEnded},
		{"wait-lost-wakeup", checkWaitLostWakeup},
		{"wait-wakes-on-append", checkWaitWakesOnAppend},
		{"wait-wakes-on-end", checkWaitWakesOnEnd},
		{"wait-unknown-turn", checkWaitUnknownTurn},
		{"wait-context", checkWaitContext},
		{"isolation", checkIsolation},
		{"fan-out", checkFanOut},
		{"retention", checkRetention},
	}
}

// CheckNames returns the names of the checks, in the order TestWindow runs
// them as subtests and Check reports them.
func CheckNames() []string {
	var names []string
	for _, c := range checks() {
		names = append(names, c.name)
	}
	return names
}

// TestWindow runs every check against the windows cfg makes, one subtest
// per check, each with a window of its own; the retention check is skipped
// without cfg.NewRetaining, frame-too-large without a frame limit.
func TestWindow(t *testing.T, cfg Config) {
	t.Helper()
	for _, c := range checks() {
		t.Run(c.name, func(t *testing.T) {
			switch err := runCheck(t, c, cfg); {
			case errors.Is(err, errSkip):
				t.Skip(err)
			case err != nil:
				t.Error(err)
			}
		})
	}
}

// Check runs the checks like TestWindow, but returns nil or the errors.Join
// of a *CheckError per failed check instead of failing t; t is handed to
// cfg's constructors only.
func Check(t *testing.T, cfg Config) error {
	var errs []error
	for _, c := range checks() {
		if err := runCheck(t, c, cfg); err != nil && !errors.Is(err, errSkip) {
			errs = append(errs, &CheckError{Check: c.name, Err: err})
		}
	}
	return errors.Join(errs...)
}

// run is one check's state: the configuration resolved, the window, and
// the check's own conversation id.
type run struct {
	t    *testing.T
	ctx  context.Context
	cfg  Config
	w    replay.Window
	conv string
}

func runCheck(t *testing.T, c check, cfg Config) error {
	if cfg.NewWindow == nil {
		return errors.New("Config.NewWindow is nil")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.Block <= 0 {
		cfg.Block = 50 * time.Millisecond
	}
	if cfg.Readers <= 0 {
		cfg.Readers = 200
	}
	r := &run{t: t, ctx: t.Context(), cfg: cfg, conv: randomID("replaytest-" + c.name + "-")}
	if c.name != "retention" {
		r.w = cfg.NewWindow(t)
	}
	return c.run(r)
}

// randomID is prefix and 12 random hex digits.
func randomID(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// key is the check's key for turn.
func (r *run) key(turn string) replay.Key {
	return replay.Key{ConversationID: r.conv, TurnID: turn}
}

// failf is a check's failure.
func failf(format string, args ...any) error { return fmt.Errorf(format, args...) }
