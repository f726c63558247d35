// Package checklist runs the named checks of a conformance kit (such as
// replaytest's): each as a subtest of a test, in the manner of
// testing/fstest.TestFS, or all of them outside a test with their failures
// joined. The kit keeps its own check bodies, state and error type.
package checklist

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
)

// ErrSkip marks a check that does not apply: a check's error that wraps it
// skips the check instead of failing it.
var ErrSkip = errors.New("check skipped")

// Check is one named check; Run is the kit's body for it, of whatever
// signature the kit's runner calls.
type Check[F any] struct {
	Name string
	Run  F
}

// Names returns the names of checks, in order.
func Names[F any](checks []Check[F]) []string {
	names := make([]string, 0, len(checks))
	for _, c := range checks {
		names = append(names, c.Name)
	}
	return names
}

// Test runs every check through run as a subtest of t named after it: an
// error wrapping ErrSkip skips the subtest, any other error fails it.
func Test[F any](t *testing.T, checks []Check[F], run func(t *testing.T, c Check[F]) error) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.Name, func(t *testing.T) {
			switch err := run(t, c); {
			case errors.Is(err, ErrSkip):
				t.Skip(err)
			case err != nil:
				t.Error(err)
			}
		})
	}
}

// Collect runs every check through run, in order, and returns nil or the
// errors.Join of wrap(name, err) for each check that failed; skipped
// checks (ErrSkip) are left out.
func Collect[F any](checks []Check[F], run func(c Check[F]) error, wrap func(name string, err error) error) error {
	var errs []error
	for _, c := range checks {
		if err := run(c); err != nil && !errors.Is(err, ErrSkip) {
			errs = append(errs, wrap(c.Name, err))
		}
	}
	return errors.Join(errs...)
}

// UniqueID is prefix and 12 random hex digits: a name no other run of a
// check uses, so that checks sharing one database never meet.
func UniqueID(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
