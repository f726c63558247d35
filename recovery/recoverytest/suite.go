package recoverytest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/Papercusp/chat-protocol-go/recovery"
)

// Subject is a host's store under test, as NewSubject returns it.
type Subject struct {
	// Store is the adapter under test. It must implement recovery.Admitter
	// as well.
	Store recovery.Store
	// Reopen, when set, returns another handle on the same database, as a
	// fresh worker process would open it. The crash checks need it.
	Reopen func() (recovery.Store, error)
	// Arm, when set, injects the named failpoint (see Failpoints) at the
	// next matching call of Store: the write fails before being applied
	// (ModeBefore), is applied and then the worker crashes (ModeAfter), or is
	// applied and its acknowledgement is lost (ModeAckLost). It returns an
	// error, such as errors.ErrUnsupported, for a failpoint it cannot
	// inject; that case is then skipped.
	Arm func(fp Failpoint) error
	// Close, when set, releases the subject after its check.
	Close func()
}

// NewSubject returns a fresh subject for one check. Turn ids are unique per
// check, so subjects may share one database.
type NewSubject func(ctx context.Context) (Subject, error)

// CheckError is a failed conformance check.
type CheckError struct {
	Check string
	Err   error
}

// Error names the failed check and its failure; the text is informative only.
func (e *CheckError) Error() string { return "recoverytest: check " + e.Check + ": " + e.Err.Error() }

// Unwrap returns the failure.
func (e *CheckError) Unwrap() error { return e.Err }

// errSkip marks a check that does not apply to a subject (no Reopen or Arm).
var errSkip = errors.New("recoverytest: check skipped")

type check struct {
	name string
	run  func(ctx context.Context, s Subject, turn recovery.TurnRef) error
}

// checks is the conformance suite, in order; suiteChecks lists the names.
func checks() []check {
	return append([]check{
		{"create-load", checkCreateLoad},
		{"cas-revision", onClaimed(checkCASRevision)},
		{"cas-concurrent", checkCASConcurrent},
		{"cas-per-effect", checkCASPerEffect},
		{"cas-after-end", onClaimed(checkCASAfterEnd)},
		{"admit-refusals", onClaimed(checkAdmitRefusals)},
		{"admit-durable-before-launch", onClaimed(checkAdmitDurable)},
		{"admit-launch-error", onClaimed(checkAdmitLaunchError)},
		{"admit-fences-end", onClaimed(checkAdmitFencesEnd)},
		{"admit-barrier", onClaimed(checkAdmitBarrier)},
		{"end-turn", checkEndTurn},
		{"race-admit-end", checkRaceAdmitEnd},
		{"linearizable", checkLinearizable},
		{"dispatch", checkDispatch},
	}, failpointChecks()...)
}

// CheckNames returns the names of the conformance checks, in the order
// TestStore runs them as subtests and Check reports them.
func CheckNames() []string {
	var names []string
	for _, c := range checks() {
		names = append(names, c.name)
	}
	return names
}

// TestStore runs the conformance suite against the stores newSubject
// returns, one subtest per check with a fresh subject each, in the manner
// of testing/fstest.TestFS. A host runs it against its own adapter; the
// checks that need Subject.Reopen or Subject.Arm are skipped without them.
// It proves what the deterministic tests of this package cannot: that the
// adapter's compare-and-swap, fence and acknowledgements behave as
// recovery.Store and recovery.Admitter require, under real concurrency.
func TestStore(t *testing.T, newSubject NewSubject) {
	t.Helper()
	for _, c := range checks() {
		t.Run(c.name, func(t *testing.T) {
			err := runCheck(t.Context(), c, newSubject)
			switch {
			case errors.Is(err, errSkip):
				t.Skip(err)
			case err != nil:
				t.Error(err)
			}
		})
	}
}

// Check runs the conformance suite like TestStore, outside a test, and
// returns nil or the errors.Join of a *CheckError per failed check.
func Check(ctx context.Context, newSubject NewSubject) error {
	var errs []error
	for _, c := range checks() {
		if err := runCheck(ctx, c, newSubject); err != nil && !errors.Is(err, errSkip) {
			errs = append(errs, &CheckError{Check: c.name, Err: err})
		}
	}
	return errors.Join(errs...)
}

func runCheck(ctx context.Context, c check, newSubject NewSubject) error {
	s, err := newSubject(ctx)
	if err != nil {
		return fmt.Errorf("new subject: %w", err)
	}
	if s.Close != nil {
		defer s.Close()
	}
	if _, ok := s.Store.(recovery.Admitter); !ok {
		return errors.New("the store does not implement recovery.Admitter")
	}
	return c.run(ctx, s, uniqueTurn(c.name))
}

func uniqueTurn(name string) recovery.TurnRef {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return recovery.TurnRef{Conversation: "conformance-" + hex.EncodeToString(b[:]), Turn: name}
}
