package conversationtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/internal/kit/checklist"
)

// Subject is one store under test, as [Config.NewSubject] returns it.
type Subject struct {
	// Store is the store under test.
	Store conversation.Store
	// Close, when set, releases the store; the kit calls it once the
	// check is done with it.
	Close func()
}

// Config is the store under test and the kit's allowances. NewSubject is
// required.
type Config struct {
	// NewSubject returns a store for one check; ctx is the check's,
	// cancelled when it ends. Stores of one run may share a database: each
	// check uses conversation ids of its own.
	NewSubject func(ctx context.Context) (Subject, error)
	// Starts is how many goroutines start a turn of one conversation at
	// once in the concurrent-start checks: 0 means 16.
	Starts int
	// Timeout bounds each check: 0 means 10 s.
	Timeout time.Duration
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
func (e *CheckError) Error() string {
	return "conversationtest: check " + e.Check + ": " + e.Err.Error()
}

// Unwrap returns the failure.
func (e *CheckError) Unwrap() error { return e.Err }

// check is one check of the kit, run on a fresh store.
type check = checklist.Check[func(r *run) error]

// checks is the kit, in order.
func checks() []check {
	return []check{
		{Name: "create-get", Run: checkCreateGet},
		{Name: "invalid-input", Run: checkInvalidInput},
		{Name: "start-end", Run: checkStartEnd},
		{Name: "end-retry", Run: checkEndRetry},
		{Name: "history", Run: checkHistory},
		{Name: "turn-lookup", Run: checkTurnLookup},
		{Name: "request-key", Run: checkRequestKey},
		{Name: "concurrent-start", Run: checkConcurrentStart},
		{Name: "concurrent-keyed-start", Run: checkConcurrentKeyedStart},
		{Name: "unique-turn-ids", Run: checkUniqueTurnIDs},
	}
}

// CheckNames returns the names of the checks, in the order [TestStore]
// runs them.
func CheckNames() []string { return checklist.Names(checks()) }

// TestStore runs every check against the stores cfg makes, one subtest per
// check, each with a store of its own.
func TestStore(t *testing.T, cfg Config) {
	t.Helper()
	checklist.Test(t, checks(), cfg, runCheck)
}

// Check runs the checks like [TestStore], outside a test, and returns nil
// or the [errors.Join] of a [*CheckError] per failed check.
func Check(ctx context.Context, cfg Config) error {
	return checklist.Collect(ctx, checks(), cfg, runCheck, func(name string, err error) error { return &CheckError{Check: name, Err: err} })
}

// run is one check's state: the configuration resolved, the store, and
// the check's prefix of conversation ids.
type run struct {
	ctx    context.Context
	cfg    Config
	s      conversation.Store
	prefix string
}

// id returns a conversation id of the check's own.
func (r *run) id(name string) string { return r.prefix + name }

func runCheck(ctx context.Context, c check, cfg Config) error {
	if cfg.Starts <= 0 {
		cfg.Starts = 16
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	sub, err := checklist.Subject(ctx, cfg.NewSubject)
	if sub.Close != nil {
		defer sub.Close()
	}
	if err != nil {
		return err
	}
	if sub.Store == nil {
		return errors.New("new subject: a nil Store")
	}
	return c.Run(&run{ctx: ctx, cfg: cfg, s: sub.Store, prefix: checklist.UniqueID("conversationtest-" + c.Name + "-")})
}
