package recoverytest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake is the configuration of subjects over a fresh fake database,
// broken as broken says.
func fake(broken recoverytest.Broken) recoverytest.Config {
	return recoverytest.Config{NewSubject: recoverytest.FakeSubject(broken)}
}

func TestStoreConformanceOfTheFakeDB(t *testing.T) {
	defer goleak.VerifyNone(t)
	recoverytest.TestStore(t, fake(recoverytest.Sound))
}

func failedChecks(err error) []string {
	var names []string
	var join interface{ Unwrap() []error }
	if errors.As(err, &join) {
		for _, e := range join.Unwrap() {
			if ce, ok := errors.AsType[*recoverytest.CheckError](e); ok {
				names = append(names, ce.Check)
			}
		}
	}
	return names
}

// TestCheckFailsEachBrokenStore shows that the suite fails every known-broken
// store, at the checks aimed at its defect.
func TestCheckFailsEachBrokenStore(t *testing.T) {
	defer goleak.VerifyNone(t)
	want := map[recoverytest.Broken][]string{
		recoverytest.BrokenIgnoresRevision: {"cas-revision", "cas-concurrent", "admit-refusals", "admit-durable-before-launch"},
		recoverytest.BrokenUnfenced:        {"admit-fences-end"},
		recoverytest.BrokenSwallowsLostAck: {},
		recoverytest.BrokenSkipsAuthorize:  {"admit-refusals"},
	}
	for _, fp := range recoverytest.Failpoints() {
		if strings.HasSuffix(string(fp), ".ack-lost") {
			want[recoverytest.BrokenSwallowsLostAck] = append(want[recoverytest.BrokenSwallowsLostAck], "failpoint/"+string(fp))
		}
	}
	require.Len(t, want[recoverytest.BrokenSwallowsLostAck], 8)
	require.Len(t, recoverytest.AllBroken(), len(want))
	for _, broken := range recoverytest.AllBroken() {
		t.Run(broken.String(), func(t *testing.T) {
			err := recoverytest.Check(t.Context(), fake(broken))
			require.Error(t, err)
			failed := failedChecks(err)
			t.Logf("failed checks: %v", failed)
			for _, name := range want[broken] {
				assert.Contains(t, failed, name)
			}
		})
	}
}

func TestCheckPassesTheSoundStore(t *testing.T) {
	defer goleak.VerifyNone(t)
	assert.NoError(t, recoverytest.Check(t.Context(), fake(recoverytest.Sound)))
}

// The Dispatcher of Dispatching passes the suite too, the dispatch check
// included.
func TestCheckPassesDispatching(t *testing.T) {
	defer goleak.VerifyNone(t)
	db := recoverytest.NewDB(nil)
	cfg := recoverytest.Config{NewSubject: func(context.Context) (recoverytest.Subject, error) {
		return recoverytest.Subject{Store: recoverytest.Dispatching(db.Open("w"))}, nil
	}}
	assert.NoError(t, recoverytest.Check(t.Context(), cfg))
}

func TestFailpointsAreNamedAndArmable(t *testing.T) {
	defer goleak.VerifyNone(t)
	fps := recoverytest.Failpoints()
	assert.Len(t, fps, 25)
	seen := map[recoverytest.Failpoint]bool{}
	db := recoverytest.NewDB(nil)
	for _, fp := range fps {
		assert.False(t, seen[fp], "duplicate %s", fp)
		seen[fp] = true
		assert.NoError(t, db.Arm(fp))
	}
	assert.Error(t, db.Arm("claim.sideways"))
}

func TestCheckNamesAreUnique(t *testing.T) {
	names := recoverytest.CheckNames()
	assert.Len(t, names, 14+len(recoverytest.Failpoints()))
	seen := map[string]bool{}
	for _, n := range names {
		assert.False(t, seen[n], "duplicate %s", n)
		seen[n] = true
	}
}

func TestCheckWithoutNewSubjectFails(t *testing.T) {
	err := recoverytest.Check(t.Context(), recoverytest.Config{})
	assert.ElementsMatch(t, recoverytest.CheckNames(), failedChecks(err), "every check fails without a subject")
}

// The kit closes each subject once its check is done, and reports a
// constructor's error as the check's failure.
func TestCheckClosesEverySubject(t *testing.T) {
	defer goleak.VerifyNone(t)
	var opened, closed int
	cfg := recoverytest.Config{NewSubject: func(ctx context.Context) (recoverytest.Subject, error) {
		s, err := recoverytest.FakeSubject(recoverytest.Sound)(ctx)
		opened++
		s.Close = func() { closed++ }
		return s, err
	}}
	require.NoError(t, recoverytest.Check(t.Context(), cfg))
	assert.Equal(t, len(recoverytest.CheckNames()), opened, "one subject per check")
	assert.Equal(t, opened, closed, "every subject closed")

	errNoDB := errors.New("no database")
	cfg.NewSubject = func(context.Context) (recoverytest.Subject, error) { return recoverytest.Subject{}, errNoDB }
	err := recoverytest.Check(t.Context(), cfg)
	assert.ErrorIs(t, err, errNoDB)
	assert.ElementsMatch(t, recoverytest.CheckNames(), failedChecks(err))
}
