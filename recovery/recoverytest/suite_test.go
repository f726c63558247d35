package recoverytest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeSubject returns subjects over a fresh fake database with flaw.
func fakeSubject(flaw recoverytest.Flaw) recoverytest.NewSubject {
	return func(context.Context) (recoverytest.Subject, error) {
		db := recoverytest.NewDB(&recoverytest.DBOptions{Flaw: flaw})
		return recoverytest.Subject{
			Store:  db.Open("worker-1"),
			Reopen: func() (recovery.Store, error) { return db.Open("worker-2"), nil },
			Arm:    db.Arm,
		}, nil
	}
}

func TestStoreConformanceOfTheFakeDB(t *testing.T) {
	defer goleak.VerifyNone(t)
	recoverytest.TestStore(t, fakeSubject(recoverytest.Sound))
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
	want := map[recoverytest.Flaw][]string{
		recoverytest.FlawIgnoresRevision: {"cas-revision", "cas-concurrent", "admit-refusals", "admit-durable-before-launch"},
		recoverytest.FlawUnfenced:        {"admit-fences-end"},
		recoverytest.FlawSwallowsLostAck: {},
		recoverytest.FlawSkipsAuthorize:  {"admit-refusals"},
	}
	for _, fp := range recoverytest.Failpoints() {
		if strings.HasSuffix(string(fp), ".ack-lost") {
			want[recoverytest.FlawSwallowsLostAck] = append(want[recoverytest.FlawSwallowsLostAck], "failpoint/"+string(fp))
		}
	}
	require.Len(t, want[recoverytest.FlawSwallowsLostAck], 8)
	for _, flaw := range recoverytest.Flaws() {
		t.Run(flaw.String(), func(t *testing.T) {
			err := recoverytest.Check(t.Context(), fakeSubject(flaw))
			require.Error(t, err)
			failed := failedChecks(err)
			t.Logf("failed checks: %v", failed)
			for _, name := range want[flaw] {
				assert.Contains(t, failed, name)
			}
		})
	}
}

func TestCheckPassesTheSoundStore(t *testing.T) {
	defer goleak.VerifyNone(t)
	assert.NoError(t, recoverytest.Check(t.Context(), fakeSubject(recoverytest.Sound)))
}

// The Dispatcher of Dispatching passes the suite too, the dispatch check
// included.
func TestCheckPassesDispatching(t *testing.T) {
	defer goleak.VerifyNone(t)
	db := recoverytest.NewDB(nil)
	sub := func(context.Context) (recoverytest.Subject, error) {
		return recoverytest.Subject{Store: recoverytest.Dispatching(db.Open("w"))}, nil
	}
	assert.NoError(t, recoverytest.Check(t.Context(), sub))
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
