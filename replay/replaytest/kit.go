package replaytest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/kit/checklist"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// Subject is one window under test, as [Config.NewSubject] returns it.
type Subject struct {
	// Window is the window under test.
	Window replay.Window
	// Close, when set, releases the window and what it holds; the kit
	// calls it once the check is done with the window.
	Close func()
}

// Config is the window under test and the kit's allowances. NewSubject is
// required; every other zero field means the default.
type Config struct {
	// NewSubject returns a fresh window for one check, with the frame limit
	// MaxFrameBytes and a retention that holds at least the few hundred
	// frames of a check; ctx is the check's, cancelled when it ends.
	NewSubject func(ctx context.Context) (Subject, error)
	// NewRetaining, when set, returns a window that retains exactly the
	// newest maxFrames frames of each turn once Append returns (count
	// retention, as [replay.MemoryOptions.MaxFrames]). Without it the
	// retention check is skipped.
	NewRetaining func(ctx context.Context, maxFrames int) (Subject, error)
	// MaxFrameBytes is the frame limit of NewSubject's windows: 0 means
	// [chatprotocol.DefaultMaxFrameBytes] (1 MiB); negative means none, and
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

// CheckError is a failed check, as Check reports it.
type CheckError struct {
	// Check is the check's name, one of [CheckNames].
	Check string
	// Err is its failure.
	Err error
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

// CheckNames returns the names of the checks, in the order [TestWindow] runs
// them as subtests and Check reports them.
func CheckNames() []string {
	return checklist.Names(checks())
}

// TestWindow runs every check against the windows cfg makes, one subtest
// per check, each with a window of its own; the retention check is skipped
// without cfg.NewRetaining, frame-too-large without a frame limit.
func TestWindow(t *testing.T, cfg Config) {
	t.Helper()
	checklist.Test(t, checks(), cfg, runCheck)
}

// Check runs the checks like [TestWindow], outside a test, and returns nil or
// the [errors.Join] of a [*CheckError] per failed check.
func Check(ctx context.Context, cfg Config) error {
	return checklist.Collect(ctx, checks(), cfg, runCheck, func(name string, err error) error { return &CheckError{Check: name, Err: err} })
}

// run is one check's state: the configuration resolved, the window and
// its Close, and the check's own conversation id.
type run struct {
	ctx   context.Context
	cfg   Config
	w     replay.Window
	close func()
	conv  string
}

func runCheck(ctx context.Context, c check, cfg Config) error {
	if cfg.NewSubject == nil {
		return errors.New("Config.NewSubject is nil")
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
	r := &run{ctx: ctx, cfg: cfg, conv: checklist.UniqueID("replaytest-" + c.Name + "-")}
	defer func() {
		if r.close != nil {
			r.close()
		}
	}()
	if c.Name != "retention" {
		if err := r.open(cfg.NewSubject(ctx)); err != nil {
			return err
		}
	}
	return c.Run(r)
}

// open makes s the check's window, or returns the constructor's error.
func (r *run) open(s Subject, err error) error {
	r.close = s.Close
	switch {
	case err != nil:
		return fmt.Errorf("new subject: %w", err)
	case s.Window == nil:
		return errors.New("new subject: no Window")
	}
	r.w = s.Window
	return nil
}

// key is the check's key for turn.
func (r *run) key(turn string) replay.Key {
	return replay.Key{ConversationID: r.conv, TurnID: turn}
}

// failf is a check's failure.
func failf(format string, args ...any) error { return fmt.Errorf(format, args...) }
