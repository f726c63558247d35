package recoverytest

import (
	"context"
	"errors"
	"testing"

	"github.com/Papercusp/chat-protocol-go/internal/kit/checklist"
	"github.com/Papercusp/chat-protocol-go/recovery"
)

// Subject is a host's store under test, as [Config.NewSubject] returns it.
type Subject struct {
	// Store is the adapter under test. It must implement [recovery.Admitter]
	// as well.
	Store recovery.Store
	// Reopen, when set, returns another handle on the same database, as a
	// fresh worker process would open it. The crash checks need it.
	Reopen func() (recovery.Store, error)
	// Arm, when set, injects the named failpoint (see Failpoints) at the
	// next matching call of Store: the write fails before being applied
	// ([ModeBefore]), is applied and then the worker crashes ([ModeAfter]), or is
	// applied and its acknowledgement is lost ([ModeAckLost]). It returns an
	// error, such as [errors.ErrUnsupported], for a failpoint it cannot
	// inject; that case is then skipped.
	Arm func(fp Failpoint) error
	// Close, when set, releases the subject and what it holds; the kit
	// calls it once the check is done with the subject.
	Close func()
}

// Config is the store under test. NewSubject is required.
type Config struct {
	// NewSubject returns a fresh subject for one check; ctx is the
	// check's, cancelled when it ends. Turn ids are unique per check, so
	// subjects may share one database.
	NewSubject func(ctx context.Context) (Subject, error)
}

// CheckError is a failed check, as Check reports it.
type CheckError struct {
	// Check is the check's name, one of [CheckNames].
	Check string
	// Err is its failure.
	Err error
}

// Error names the failed check and its failure; the text is informative only.
func (e *CheckError) Error() string { return "recoverytest: check " + e.Check + ": " + e.Err.Error() }

// Unwrap returns the failure.
func (e *CheckError) Unwrap() error { return e.Err }

// errSkip marks a check that does not apply to a subject (no Reopen or Arm).
var errSkip = checklist.ErrSkip

// check is one check of the suite, run on a fresh subject and turn.
type check = checklist.Check[func(ctx context.Context, s Subject, turn recovery.TurnRef) error]

// checks is the conformance suite, in order.
func checks() []check {
	return append([]check{
		{Name: "create-load", Run: checkCreateLoad},
		{Name: "cas-revision", Run: onClaimed(checkCASRevision)},
		{Name: "cas-concurrent", Run: checkCASConcurrent},
		{Name: "cas-per-effect", Run: checkCASPerEffect},
		{Name: "cas-after-end", Run: onClaimed(checkCASAfterEnd)},
		{Name: "admit-refusals", Run: onClaimed(checkAdmitRefusals)},
		{Name: "admit-durable-before-launch", Run: onClaimed(checkAdmitDurable)},
		{Name: "admit-launch-error", Run: onClaimed(checkAdmitLaunchError)},
		{Name: "admit-fences-end", Run: onClaimed(checkAdmitFencesEnd)},
		{Name: "admit-barrier", Run: onClaimed(checkAdmitBarrier)},
		{Name: "end-turn", Run: checkEndTurn},
		{Name: "race-admit-end", Run: checkRaceAdmitEnd},
		{Name: "linearizable", Run: checkLinearizable},
		{Name: "dispatch", Run: checkDispatch},
	}, failpointChecks()...)
}

// CheckNames returns the names of the conformance checks, in the order
// [TestStore] runs them as subtests and Check reports them.
func CheckNames() []string {
	return checklist.Names(checks())
}

// TestStore runs the conformance suite against the stores cfg makes, one
// subtest per check with a fresh subject each, in the manner of
// testing/fstest.TestFS. A host runs it against its own adapter; the
// checks that need [Subject.Reopen] or [Subject.Arm] are skipped without them.
// It proves what the deterministic tests of this package cannot: that the
// adapter's compare-and-swap, fence and acknowledgements behave as
// [recovery.Store] and [recovery.Admitter] require, under real concurrency.
func TestStore(t *testing.T, cfg Config) {
	t.Helper()
	checklist.Test(t, checks(), cfg, runCheck)
}

// Check runs the conformance suite like [TestStore], outside a test, and
// returns nil or the [errors.Join] of a [*CheckError] per failed check.
func Check(ctx context.Context, cfg Config) error {
	return checklist.Collect(ctx, checks(), cfg, runCheck, func(name string, err error) error { return &CheckError{Check: name, Err: err} })
}

func runCheck(ctx context.Context, c check, cfg Config) error {
	s, err := checklist.Subject(ctx, cfg.NewSubject)
	if s.Close != nil {
		defer s.Close()
	}
	if err != nil {
		return err
	}
	if _, ok := s.Store.(recovery.Admitter); !ok {
		return errors.New("the store does not implement recovery.Admitter")
	}
	return c.Run(ctx, s, recovery.TurnRef{Conversation: checklist.UniqueID("conformance-"), Turn: c.Name})
}

// FakeSubject returns the constructor of subjects over a fresh [DB] each,
// broken as broken says (Sound: not at all): Store and Reopen are two
// workers' handles, Arm is [DB.Arm]. It is how this package's tests run the
// suite against its own stores.
func FakeSubject(broken Broken) func(ctx context.Context) (Subject, error) {
	return func(context.Context) (Subject, error) {
		db := NewDB(&DBOptions{Broken: broken})
		return Subject{
			Store:  db.Open("worker-1"),
			Reopen: func() (recovery.Store, error) { return db.Open("worker-2"), nil },
			Arm:    db.Arm,
		}, nil
	}
}
