// Package checklist runs the named checks of the module's conformance kits
// (replay/replaytest, recovery/recoverytest, interactions/interactionstest)
// in their one shape: each check as a subtest of a test, in the manner of
// testing/fstest.TestFS, or all of them outside a test with their failures
// joined. Each kit keeps its own check bodies, subject and *CheckError.
//
// It lives outside internal/testkit because the kits are public packages a
// host imports from its tests: internal/testkit is imported by this
// module's own tests only, this package by the kits.
package checklist

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
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

// Test runs every check through run with cfg, the kit's configuration, as
// a subtest of t named after it, with the subtest's context: an error
// wrapping [ErrSkip] skips the subtest, any other error fails it.
func Test[F, C any](t *testing.T, checks []Check[F], cfg C, run func(ctx context.Context, c Check[F], cfg C) error) {
	t.Helper()
	for _, c := range checks {
		t.Run(c.Name, func(t *testing.T) {
			switch err := run(t.Context(), c, cfg); {
			case errors.Is(err, ErrSkip):
				t.Skip(err)
			case err != nil:
				t.Error(err)
			}
		})
	}
}

// Collect runs every check through run with cfg, in order, each with a
// context of its own derived from ctx and cancelled once run returns, as a
// subtest's is; it returns nil or the [errors.Join] of wrap(name, err) for
// each check that failed. Skipped checks ([ErrSkip]) are left out.
func Collect[F, C any](ctx context.Context, checks []Check[F], cfg C, run func(ctx context.Context, c Check[F], cfg C) error, wrap func(name string, err error) error) error {
	var errs []error
	for _, c := range checks {
		cctx, cancel := context.WithCancel(ctx)
		err := run(cctx, c, cfg)
		cancel()
		if err != nil && !errors.Is(err, ErrSkip) {
			errs = append(errs, wrap(c.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Subject returns the subject newSubject, a kit's Config.NewSubject, makes
// for one check: an error when it is nil, its error wrapped as "new
// subject: …". The subject comes back with the error too, for the caller
// to release what it holds.
func Subject[S any](ctx context.Context, newSubject func(ctx context.Context) (S, error)) (S, error) {
	if newSubject == nil {
		var none S
		return none, errors.New("Config.NewSubject is nil")
	}
	s, err := newSubject(ctx)
	if err != nil {
		return s, fmt.Errorf("new subject: %w", err)
	}
	return s, nil
}

// UniqueID is prefix and 12 random hex digits: a name no other run of a
// check uses, so that checks sharing one database never meet.
func UniqueID(prefix string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
