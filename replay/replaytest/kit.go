package replaytest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/testkit/checklist"
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
var errSkip = checklist.ErrSkip

// check is one check of the kit, run on a fresh window.
type check = checklist.Check[func(r *run) error]

// checks is the kit, in order.
func checks() []check {
	return []check{
		{Name: "empty-turn", Run: checkEmptyTurn},
		{Name: "append-read", Run: checkAppendRead},
		{Name: "cursor-ahead", Run: checkCursorAhead},
		{Name: "read-pages", Run: checkReadPages},
		{Name: "append-refusals", Run: checkAppendRefusals},
		{Name: "frame-too-large", Run: checkFrameTooLarge},
		{Name: "ended", Run: checkEnded},
		{Name: "wait-lost-wakeup", Run: checkWaitLostWakeup},
		{Name: "wait-wakes-on-append", Run: checkWaitWakesOnAppend},
		{Name: "wait-wakes-on-end", Run: checkWaitWakesOnEnd},
		{Name: "wait-unknown-turn", Run: checkWaitUnknownTurn},
		{Name: "wait-context", Run: checkWaitContext},
		{Name: "isolation", Run: checkIsolation},
		{Name: "fan-out", Run: checkFanOut},
		{Name: "retention", Run: checkRetention},
	}
}

// CheckNames returns the names of the checks, in the order TestWindow runs
// them as subtests and Check reports them.
func CheckNames() []string {
	return checklist.Names(checks())
}

// TestWindow runs every check against the windows cfg makes, one subtest
// per check, each with a window of its own; the retention check is skipped
// without cfg.NewRetaining, frame-too-large without a frame limit.
func TestWindow(t *testing.T, cfg Config) {
	t.Helper()
	checklist.Test(t, checks(), func(t *testing.T, c check) error { return runCheck(t, c, cfg) })
}

// Check runs the checks like TestWindow, but returns nil or the errors.Join
// of a *CheckError per failed check instead of failing t; t is handed to
// cfg's constructors only.
func Check(t *testing.T, cfg Config) error {
	return checklist.Collect(checks(), func(c check) error { return runCheck(t, c, cfg) },
		func(name string, err error) error { return &CheckError{Check: name, Err: err} })
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
	r := &run{t: t, ctx: t.Context(), cfg: cfg, conv: checklist.UniqueID("replaytest-" + c.Name + "-")}
	if c.Name != "retention" {
		r.w = cfg.NewWindow(t)
	}
	return c.Run(r)
}

// key is the check's key for turn.
func (r *run) key(turn string) replay.Key {
	return replay.Key{ConversationID: r.conv, TurnID: turn}
}

// failf is a check's failure.
func failf(format string, args ...any) error { return fmt.Errorf(format, args...) }
