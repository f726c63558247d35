package interactionstest

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"

	_ "github.com/Papercusp/chat-protocol-go/internal/testkit/golden" // accepts go test ./... -update

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/Papercusp/chat-protocol-go/interactions"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFakeStorePasses(t *testing.T) {
	TestStore(t, FakeFixture(nil))
}

// recorder is a TB that records failures instead of failing the test, so
// that a check can be run against a store that must fail it.
type recorder struct {
	mu     sync.Mutex
	failed bool
	msgs   []string
	ctx    context.Context
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Context() context.Context { return r.ctx }

// runCheck runs c against f in its own goroutine (FailNow exits it) and
// reports whether it failed.
func runCheck(t *testing.T, c check, f Fixture) bool {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &recorder{ctx: ctx}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.run(r, f)
	}()
	<-done
	return r.failed
}

// Every known-broken store fails the check aimed at it, and only the
// checks that can see its flaw fail... at least that one.
func TestStoreCatchesKnownBrokenStores(t *testing.T) {
	aimedAt := map[Broken]string{
		BrokenReadThenWrite:     "CardIsFenced",
		BrokenProcessLock:       "CardIsFenced",
		BrokenCachedAuthority:   "AuthorityIsCurrent",
		BrokenUnfencedAuthority: "AuthorityIsFenced",
		BrokenLostTransition:    "RoundTrip",
		BrokenRetriesCallback:   "CallbackOnce",
		BrokenTrustsNext:        "RefusesInvalidNext",
		BrokenWritesReadOnly:    "ReadOnlyWritesNothing",
		BrokenSwallowsRefusal:   "RefusalWritesNothing",
	}
	for _, kind := range AllBroken() {
		t.Run(kind.String(), func(t *testing.T) {
			t.Parallel()
			var failed []string
			for _, c := range checks() {
				f := fakeFixture(func(db *DB) interactions.Store { return db.OpenBroken(kind, nil) })
				if runCheck(t, c, f) {
					failed = append(failed, c.name)
				}
			}
			t.Logf("%v fails %v", kind, failed)
			assert.Contains(t, failed, aimedAt[kind], "TestStore must catch %v", kind)
		})
	}
}

// The checks themselves pass on the correct store when run through the
// recorder, so a failure above is the broken store's.
func TestRecorderPassesCorrectStore(t *testing.T) {
	for _, c := range checks() {
		assert.False(t, runCheck(t, c, fakeFixture(nil)), c.name)
	}
}
