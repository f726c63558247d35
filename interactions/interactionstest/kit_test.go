package interactionstest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is the configuration of subjects over a fresh fake database whose
// workers are broken as broken says.
func fake(broken interactionstest.Broken) interactionstest.Config {
	return interactionstest.Config{NewSubject: interactionstest.FakeSubject(broken)}
}

func failedChecks(err error) []string {
	var names []string
	if join, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range join.Unwrap() {
			if ce, ok := errors.AsType[*interactionstest.CheckError](e); ok {
				names = append(names, ce.Check)
			}
		}
	}
	return names
}

func TestFakeStorePasses(t *testing.T) {
	interactionstest.TestStore(t, fake(interactionstest.Sound))
}

// The checks pass the sound store when run by Check too, so a failure
// below is the broken store's.
func TestCheckPassesTheSoundStore(t *testing.T) {
	assert.NoError(t, interactionstest.Check(t.Context(), fake(interactionstest.Sound)))
}

// TestCheckFailsEachBrokenStore shows that the kit fails every
// known-broken store, at least at the check aimed at its defect.
func TestCheckFailsEachBrokenStore(t *testing.T) {
	aimedAt := map[interactionstest.Broken]string{
		interactionstest.BrokenReadThenWrite:     "card-is-fenced",
		interactionstest.BrokenProcessLock:       "card-is-fenced",
		interactionstest.BrokenCachedAuthority:   "authority-is-current",
		interactionstest.BrokenUnfencedAuthority: "authority-is-fenced",
		interactionstest.BrokenLostTransition:    "round-trip",
		interactionstest.BrokenRetriesCallback:   "callback-once",
		interactionstest.BrokenTrustsNext:        "refuses-invalid-next",
		interactionstest.BrokenWritesReadOnly:    "read-only-writes-nothing",
		interactionstest.BrokenSwallowsRefusal:   "refusal-writes-nothing",
	}
	require.Len(t, interactionstest.AllBroken(), len(aimedAt))
	for _, broken := range interactionstest.AllBroken() {
		t.Run(broken.String(), func(t *testing.T) {
			t.Parallel()
			err := interactionstest.Check(t.Context(), fake(broken))
			require.Error(t, err)
			failed := failedChecks(err)
			t.Logf("%v fails %v", broken, failed)
			assert.Contains(t, failed, aimedAt[broken], "the kit must catch %v", broken)
		})
	}
}

func TestCheckNamesAreUnique(t *testing.T) {
	names := interactionstest.CheckNames()
	assert.Len(t, names, 10)
	seen := map[string]bool{}
	for _, n := range names {
		assert.False(t, seen[n], "duplicate %s", n)
		seen[n] = true
	}
}

func TestCheckWithoutNewSubjectFails(t *testing.T) {
	err := interactionstest.Check(t.Context(), interactionstest.Config{})
	assert.ElementsMatch(t, interactionstest.CheckNames(), failedChecks(err), "every check fails without a subject")
}

// The kit closes each subject once its check is done, reports a
// constructor's error as the check's failure, and a subject function's
// error as a failure of the check that called it.
func TestCheckClosesEverySubject(t *testing.T) {
	var opened, closed int
	cfg := interactionstest.Config{NewSubject: func(ctx context.Context) (interactionstest.Subject, error) {
		s, err := interactionstest.FakeSubject(interactionstest.Sound)(ctx)
		opened++
		s.Close = func() { closed++ }
		return s, err
	}}
	require.NoError(t, interactionstest.Check(t.Context(), cfg))
	assert.Equal(t, len(interactionstest.CheckNames()), opened, "one subject per check")
	assert.Equal(t, opened, closed, "every subject closed")

	errNoDB := errors.New("no database")
	err := interactionstest.Check(t.Context(), interactionstest.Config{NewSubject: func(context.Context) (interactionstest.Subject, error) {
		return interactionstest.Subject{}, errNoDB
	}})
	assert.ErrorIs(t, err, errNoDB)
	assert.ElementsMatch(t, interactionstest.CheckNames(), failedChecks(err))

	cfg.NewSubject = func(ctx context.Context) (interactionstest.Subject, error) {
		s, err := interactionstest.FakeSubject(interactionstest.Sound)(ctx)
		s.Grant = func(context.Context, interactions.Caller, string) error { return errNoDB }
		return s, err
	}
	err = interactionstest.Check(t.Context(), cfg)
	assert.ElementsMatch(t, []string{"authority-is-current", "authority-is-fenced"}, failedChecks(err),
		"the checks that grant authority fail, and only they")
}
