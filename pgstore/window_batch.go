package pgstore

import (
	"context"
	"errors"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// The bounds of one append batch: at most this many appends, and at most
// this many bytes of frames once the first is in (a larger first frame
// goes alone).
const (
	maxBatchAppends = 64
	maxBatchBytes   = 1 << 20
	// appendLanes is how many batches of one Window may be on the wire
	// at once.
	appendLanes = 1
)

// appendRequest is one Append's statement waiting for its batch.
type appendRequest struct {
	args  []any // appendStatement's arguments, $1 to $9
	bytes int   // the frame's length

	done     chan struct{} // closed when err and bounds are set
	bounds   replay.Bounds
	err      error
	fallback bool // the batch failed on the server: run the statement alone
}

// appendBatcher is a Window's group commit: the appends that arrive while
// earlier ones are on the wire go together in the next batch, one round
// trip and one transaction whose commit publishes their notifications.
// PostgreSQL serializes the commits of notifying transactions (one lock per
// database), so concurrent producers share commits instead of queueing for
// one each. At most lanes batches are on the wire at once.
type appendBatcher struct {
	w     *Window
	lanes int

	mu      sync.Mutex
	queue   []*appendRequest
	running int
	closed  bool
	wg      sync.WaitGroup
}

// submit queues r and returns once its batch has answered. It returns
// errClosed, without sending anything, when the window is closed.
func (q *appendBatcher) submit(r *appendRequest) error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return errClosed
	}
	q.queue = append(q.queue, r)
	if q.running < q.lanes {
		q.running++
		q.wg.Add(1)
		go q.drain()
	}
	q.mu.Unlock()
	<-r.done
	return nil
}

// close refuses new appends and waits for the batches on the wire.
func (q *appendBatcher) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.wg.Wait()
}

// drain sends batches until the queue is empty.
func (q *appendBatcher) drain() {
	defer q.wg.Done()
	for {
		q.mu.Lock()
		if len(q.queue) == 0 {
			q.running--
			q.mu.Unlock()
			return
		}
		n, size := 0, 0
		for n < len(q.queue) && n < maxBatchAppends && (n == 0 || size+q.queue[n].bytes <= maxBatchBytes) {
			size += q.queue[n].bytes
			n++
		}
		batch := make([]*appendRequest, n)
		copy(batch, q.queue)
		q.queue = append(q.queue[:0], q.queue[n:]...)
		q.mu.Unlock()
		q.send(batch)
	}
}

// send runs batch's statements in one round trip, as one implicit
// transaction, and answers each request: its bounds, pgx.ErrNoRows when
// its statement was refused (the transaction still commits the others),
// fallback when the server failed the transaction (nothing of it was
// stored; each statement then runs alone, with its own retries and
// errors), or the error of a connection that broke, after which each
// outcome is unknown.
func (q *appendBatcher) send(batch []*appendRequest) {
	ctx, cancel := context.WithTimeout(q.w.ctx, q.w.queryTimeout)
	defer cancel()
	var b pgx.Batch
	for _, r := range batch {
		b.Queue(q.w.appendSQL, r.args...)
	}
	results := q.w.pool.SendBatch(ctx, &b)
	errs := make([]error, len(batch))
	for i, r := range batch {
		errs[i] = scanAppended(results.QueryRow(), &r.bounds)
	}
	closeErr := results.Close()
	var pgErr *pgconn.PgError
	failed := closeErr
	for _, err := range errs {
		if failed == nil && err != nil && !errors.Is(err, pgx.ErrNoRows) {
			failed = err
		}
	}
	for i, r := range batch {
		switch {
		case failed == nil:
			r.err = errs[i]
		case errors.As(failed, &pgErr):
			r.fallback = true
		default:
			r.err = failed
		}
		close(r.done)
	}
}
