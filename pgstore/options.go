package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options tunes a store; nil means all defaults.
type Options struct {
	// Isolation is the isolation level of the store's explicit
	// transactions (interactions' Transact and Read): [pgx.ReadCommitted],
	// the default when "", or [pgx.Serializable]; the constructors refuse
	// [pgx.RepeatableRead] (docs/contract.md section 13.7). Single-statement
	// writes run in the session's default_transaction_isolation and hold at
	// every level.
	Isolation pgx.TxIsoLevel
	// Retries is how many times a statement or transaction that the server
	// rolled back with a serialization failure (SQLSTATE 40001) or a
	// deadlock (40P01) is run again, inside the store, before it gives up
	// with code checkpoint-write-failed; 0 means 16. A retry never runs a
	// caller's callback again.
	Retries int
	// UnlockTimeout bounds the statement that releases an admission fence
	// when the caller's context has ended (the release must still happen);
	// 0 means 5 s. When it fails the connection is closed, which releases
	// the fence.
	UnlockTimeout time.Duration
	// FenceLinger is how long, at most, the fence of a dispatch (see
	// [RecoveryStore.ClaimEffect]) stays held after launch returned, waiting
	// for the execution's result so that the release and the completion
	// share one round trip; 0 means 2 ms. A cancellation of the turn waits
	// for it at most that much longer; it never waits for the execution.
	FenceLinger time.Duration
}

// settings are Options with the defaults applied.
type settings struct {
	isolation     pgx.TxIsoLevel
	retries       int
	unlockTimeout time.Duration
	fenceLinger   time.Duration
}

var errRepeatableRead = errors.New("pgstore: repeatable read is not supported: use read committed or serializable")

func newSettings(opts *Options) (settings, error) {
	s := settings{isolation: pgx.ReadCommitted, retries: defaultRetries, unlockTimeout: 5 * time.Second, fenceLinger: 2 * time.Millisecond}
	if opts == nil {
		return s, nil
	}
	switch opts.Isolation {
	case "":
	case pgx.ReadCommitted, pgx.Serializable:
		s.isolation = opts.Isolation
	case pgx.RepeatableRead:
		return s, errRepeatableRead
	default:
		return s, errors.New("pgstore: unknown isolation level " + string(opts.Isolation))
	}
	if opts.Retries < 0 || opts.FenceLinger < 0 {
		return s, errors.New("pgstore: negative Retries or FenceLinger")
	}
	s.retries = orDefault(opts.Retries, s.retries)
	if opts.UnlockTimeout > 0 {
		s.unlockTimeout = opts.UnlockTimeout
	}
	s.fenceLinger = orDefault(opts.FenceLinger, s.fenceLinger)
	return s, nil
}

// orDefault is v, or def when v is its type's zero: an option left unset.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// retry runs op until it succeeds, fails with an error that is not
// retryable, or has been retried s.retries times; it returns op's last
// error. op must be safe to run again after a retryable error: no
// callback of the caller may have run inside it.
func (s settings) retry(ctx context.Context, op func() error) error {
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil || !retryable(err) || attempt >= s.retries || ctx.Err() != nil {
			return err
		}
		// A short, growing pause lets the transaction that won finish.
		t := time.NewTimer(time.Duration(attempt+1) * 200 * time.Microsecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}
