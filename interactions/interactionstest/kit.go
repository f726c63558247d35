package interactionstest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/internal/kit/checklist"
)

// Subject is one fresh, empty database under test, as [Config.NewSubject]
// returns it. Open, Grant, Revoke and Transitions are required.
type Subject struct {
	// Open returns a fresh worker's Store on this database: a new
	// connection pool, as another process would have.
	Open func() (interactions.Store, error)
	// Grant makes c currently authorized in conversation, with c's tenant,
	// customer and public owner, by writing the host's own authorization
	// tables; Revoke takes conversation away from c. Revoke may block until
	// a transaction holding c's authority ends.
	Grant  func(ctx context.Context, c interactions.Caller, conversation string) error
	Revoke func(ctx context.Context, c interactions.Caller, conversation string) error
	// Transitions returns the workflow transitions stored for key, oldest
	// first.
	Transitions func(ctx context.Context, key interactions.Key) ([]interactions.Transition, error)
	// Close, when set, releases the database and every store Open
	// returned; the kit calls it once the check is done with the subject.
	Close func()
}

// Config is the store under test and the kit's allowance. NewSubject is
// required; a zero FenceWait means the default.
type Config struct {
	// NewSubject returns a fresh subject for one check, on an empty
	// database; ctx is the check's, cancelled when it ends.
	NewSubject func(ctx context.Context) (Subject, error)
	// FenceWait is how long a check waits for a second transaction to get
	// past a fence it must not pass; 0 means 100 ms. Raise it for a slow
	// database.
	FenceWait time.Duration
}

// CheckError is a failed check, as Check reports it.
type CheckError struct {
	// Check is the check's name, one of [CheckNames].
	Check string
	// Err is its failure.
	Err error
}

// Error names the failed check and its failure; the text is informative only.
func (e *CheckError) Error() string {
	return "interactionstest: check " + e.Check + ": " + e.Err.Error()
}

// Unwrap returns the failure.
func (e *CheckError) Unwrap() error { return e.Err }

// check is one check of the suite, run on a fresh subject.
type check = checklist.Check[func(t tb, f *fixture)]

// checks returns every check of the suite, in order.
func checks() []check {
	return []check{
		{Name: "round-trip", Run: checkRoundTrip},
		{Name: "callback-once", Run: checkCallbackOnce},
		{Name: "refusal-writes-nothing", Run: checkRefusalWritesNothing},
		{Name: "read-only-writes-nothing", Run: checkReadOnlyWritesNothing},
		{Name: "refuses-invalid-next", Run: checkRefusesInvalidNext},
		{Name: "authority-is-current", Run: checkAuthorityIsCurrent},
		{Name: "authority-is-fenced", Run: checkAuthorityIsFenced},
		{Name: "card-is-fenced", Run: checkCardIsFenced},
		{Name: "racing-workers", Run: checkRacingWorkers},
		{Name: "cancelled-context", Run: checkCancelledContext},
	}
}

// CheckNames returns the names of the checks, in the order [TestStore] runs
// them as subtests and Check reports them.
func CheckNames() []string {
	return checklist.Names(checks())
}

// TestStore checks that a host's [interactions.Store] keeps the seam's
// promises ([interactions.Store]; docs/contract.md section 13), one subtest
// per check with a fresh subject each, in the manner of
// testing/fstest.TestFS. The checks: records and transitions round-trip
// through a fresh worker; the callback runs exactly once; a refusal and a
// read-only result write nothing; a change for another key or that does
// not advance the revision by one is refused; authority is read fresh, and
// a revocation cannot commit while an answer that relies on it is being
// decided; two workers never decide inside the fence at once; racing
// workers land one change; a cancelled context commits nothing. Two checks
// wait [Config.FenceWait] for something that must not happen.
func TestStore(t *testing.T, cfg Config) {
	t.Helper()
	checklist.Test(t, checks(), cfg, runCheck)
}

// Check runs the checks like [TestStore], outside a test, and returns nil or
// the [errors.Join] of a [*CheckError] per failed check.
func Check(ctx context.Context, cfg Config) error {
	return checklist.Collect(ctx, checks(), cfg, runCheck, func(name string, err error) error { return &CheckError{Check: name, Err: err} })
}

// fixture is what a check runs against: the subject and the allowance.
type fixture struct {
	Subject
	fenceWait time.Duration
}

// runCheck runs c on a fresh subject, on a goroutine of its own (a
// failing assertion ends it, as it ends a test), and returns the
// assertions' failures.
func runCheck(ctx context.Context, c check, cfg Config) error {
	s, err := checklist.Subject(ctx, cfg.NewSubject)
	if s.Close != nil {
		defer s.Close()
	}
	switch {
	case err != nil:
		return err
	case s.Open == nil || s.Grant == nil || s.Revoke == nil || s.Transitions == nil:
		return errors.New("new subject: Open, Grant, Revoke and Transitions are required")
	}
	f := &fixture{Subject: s, fenceWait: cfg.FenceWait}
	if f.fenceWait <= 0 {
		f.fenceWait = 100 * time.Millisecond
	}
	r := &recorder{ctx: ctx}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(r, f)
	}()
	<-done
	return r.err()
}

// tb is the part of testing.TB the checks use (through testify).
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
	Context() context.Context
}

// recorder is the tb of one check: it keeps the failures for the check's
// error, and FailNow ends the check's goroutine as it ends a test's.
type recorder struct {
	ctx    context.Context
	mu     sync.Mutex
	failed bool
	msgs   []string
}

func (r *recorder) Helper()                  {}
func (r *recorder) Context() context.Context { return r.ctx }

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.msgs = append(r.msgs, strings.TrimSpace(fmt.Sprintf(format, args...)))
}

func (r *recorder) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}

// err is nil when the check passed, or its failures.
func (r *recorder) err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !r.failed:
		return nil
	case len(r.msgs) == 0:
		return errors.New("failed")
	}
	return errors.New(strings.Join(r.msgs, "\n"))
}

// open returns a fresh worker's store, or fails the check.
func open(t tb, f *fixture) interactions.Store {
	t.Helper()
	st, err := f.Open()
	require.NoError(t, err, "Subject.Open")
	return st
}

// grant and revoke change authority through the subject, or fail the check.
func grant(t tb, f *fixture, c interactions.Caller, conversation string) {
	t.Helper()
	require.NoError(t, f.Grant(t.Context(), c, conversation), "Subject.Grant")
}

func revoke(t tb, f *fixture, c interactions.Caller, conversation string) {
	t.Helper()
	require.NoError(t, f.Revoke(t.Context(), c, conversation), "Subject.Revoke")
}

// transitions returns the transitions stored for key, or fails the check.
func transitions(t tb, f *fixture, key interactions.Key) []interactions.Transition {
	t.Helper()
	trs, err := f.Transitions(t.Context(), key)
	require.NoError(t, err, "Subject.Transitions")
	return trs
}

// FakeSubject returns the constructor of subjects over a fresh [DB] each,
// whose workers are broken as broken says ([DB.OpenBroken]; Sound: [DB.Open]).
// It is how this package's tests run the suite against its own stores.
func FakeSubject(broken Broken) func(ctx context.Context) (Subject, error) {
	return func(context.Context) (Subject, error) {
		db := NewDB()
		return Subject{
			Open: func() (interactions.Store, error) { return db.OpenBroken(broken, nil), nil },
			Grant: func(_ context.Context, c interactions.Caller, conversation string) error {
				db.Grant(c, conversation)
				return nil
			},
			Revoke: func(_ context.Context, c interactions.Caller, conversation string) error {
				db.Revoke(c, conversation)
				return nil
			},
			Transitions: func(_ context.Context, key interactions.Key) ([]interactions.Transition, error) {
				return db.Transitions(key), nil
			},
		}, nil
	}
}
