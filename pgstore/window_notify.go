package pgstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// sqlPublish sends one notification per payload of $1, in one statement
// and one transaction: the server delivers them when it commits.
const sqlPublish = `SELECT pg_notify('` + notifyChannel + `', p) FROM unnest($1::text[]) AS p`

// publisher announces a Window's committed frames. Append hands it its
// turn's payload once the frame's statement has committed; it sends every
// payload handed since its last statement in the next one, as soon as that
// last one has returned. A transaction that notifies takes a lock for the
// whole database at its commit, so appends that notified themselves would
// commit one at a time; they commit side by side instead, and the notifying
// commits are one per flush.
type publisher struct {
	w    *Window
	wake chan struct{} // a flush is due; buffered, one slot

	mu      sync.Mutex
	pending map[string]struct{} // payloads not yet sent
}

func newPublisher(w *Window) *publisher {
	return &publisher{w: w, wake: make(chan struct{}, 1), pending: make(map[string]struct{})}
}

// announce queues payloads for the next flush and makes it due.
func (p *publisher) announce(payloads ...string) {
	p.mu.Lock()
	for _, s := range payloads {
		p.pending[s] = struct{}{}
	}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run flushes whenever a payload is queued, until ctx ends; then it flushes
// once more what was queued, so that a Window closed right after an Append
// still announces it.
func (p *publisher) run(ctx context.Context) {
	backoff := 20 * time.Millisecond
	for {
		select {
		case <-ctx.Done():
			final, cancel := context.WithTimeout(context.WithoutCancel(ctx), p.w.queryTimeout)
			_ = p.flush(final)
			cancel()
			return
		case <-p.wake:
		}
		if err := p.flush(ctx); err != nil {
			// The payloads are queued again, and due after the pause;
			// the readers' catch-up reads cover the delay.
			if p.w.log != nil && ctx.Err() == nil {
				p.w.log.Warn("pgstore: window notification failed; retrying", "err", err)
			}
			t := time.NewTimer(backoff)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 20 * time.Millisecond
	}
}

// flush sends the pending payloads in one statement. When the connection
// fails they are pending again; when the server refuses the statement,
// each is sent alone and one the server refuses alone is dropped.
func (p *publisher) flush(ctx context.Context) error {
	p.mu.Lock()
	if len(p.pending) == 0 {
		p.mu.Unlock()
		return nil
	}
	payloads := make([]string, 0, len(p.pending))
	for s := range p.pending {
		payloads = append(payloads, s)
	}
	clear(p.pending)
	p.mu.Unlock()
	qctx, cancel := context.WithTimeout(ctx, p.w.queryTimeout)
	defer cancel()
	_, err := p.w.pool.Exec(qctx, sqlPublish, payloads)
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &pgErr):
		p.announce(payloads...)
		return err
	case len(payloads) == 1:
		return nil // refused alone: dropped, no frame of it can be stored either
	}
	// The server refused the statement: one payload it cannot take must
	// not hold back the others. Each goes alone.
	err = nil
	for _, s := range payloads {
		if _, e := p.w.pool.Exec(qctx, sqlPublish, []string{s}); e != nil && !errors.As(e, &pgErr) {
			err = e
			p.announce(s)
		}
	}
	return err
}
