package pgstore

import (
	"context"
	"errors"
	"slices"
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
	// at once: up to as many producers, an append never waits for
	// another's batch.
	appendLanes = 4
)

// appendRequest is one Append's frame waiting for its batch.
type appendRequest struct {
	key              replay.Key
	seq              int64
	typ              string
	data             []byte
	ends, toolResult bool

	done     chan struct{} // closed when err and bounds are set
	bounds   replay.Bounds
	err      error
	fallback bool // the batch failed on the server: run the frame alone
}

// args returns sqlAppend's arguments for r, maxFrames and maxBytes kept.
func (r *appendRequest) args(maxFrames, maxBytes int) []any {
	return []any{r.key.ConversationID, r.key.TurnID, r.seq, r.typ, r.data, r.ends, r.toolResult, int64(max(maxFrames, 0)), int64(maxBytes)}
}

// appendBatcher is a Window's group commit: the appends that arrive while
// lanes batches are on the wire go together in the next one, a statement
// (sqlAppendBatch) and a transaction for them all, so that concurrent
// producers share round trips and commits. A batch holds one frame per
// turn; a second frame of a turn waits for the next batch.
type appendBatcher struct {
	w     *Window
	lanes int

	mu      sync.Mutex
	queue   []*appendRequest
	running int
	closed  bool
	wg      sync.WaitGroup
}

// submit queues r and waits for its batch's answer. While r is still
// queued, the end of ctx takes it off the queue: submit then reports sent
// false with ctx's error, as it does with errClosed for a closed window.
// Once r's batch is on the wire, submit waits for its answer (bounded by
// the window's QueryTimeout) or the end of ctx: then it reports sent true
// with ctx's error, the outcome unknown, and the caller must leave r's
// answer to the batch.
func (q *appendBatcher) submit(ctx context.Context, r *appendRequest) (sent bool, err error) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false, errClosed
	}
	q.queue = append(q.queue, r)
	if q.running < q.lanes {
		q.running++
		q.wg.Add(1)
		go q.drain()
	}
	q.mu.Unlock()
	select {
	case <-r.done:
		return true, nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	if i := slices.Index(q.queue, r); i >= 0 {
		q.queue = slices.Delete(q.queue, i, i+1)
		q.mu.Unlock()
		return false, ctx.Err()
	}
	q.mu.Unlock()
	select {
	case <-r.done:
		return true, nil
	default:
		return true, ctx.Err()
	}
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
		batch := q.take()
		if batch == nil {
			q.running--
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		q.send(batch)
	}
}

// take, called with q.mu held, removes the next batch from the queue and
// returns it, nil when the queue is empty: the oldest frame of each turn,
// oldest first, up to maxBatchAppends frames and maxBatchBytes (a larger
// first frame goes alone). The others keep their order in the queue.
func (q *appendBatcher) take() []*appendRequest {
	var batch []*appendRequest
	rest := q.queue[:0]
	turns := make(map[replay.Key]struct{})
	size := 0
	for _, r := range q.queue {
		_, dup := turns[r.key]
		if dup || len(batch) == maxBatchAppends || (len(batch) > 0 && size+len(r.data) > maxBatchBytes) {
			rest = append(rest, r)
			continue
		}
		turns[r.key] = struct{}{}
		size += len(r.data)
		batch = append(batch, r)
	}
	clear(q.queue[len(rest):])
	q.queue = rest
	return batch
}

// sqlAppendBatch is sqlAppend for many turns at once, one frame each: the
// same steps, row by row, in one statement. Its arguments are arrays with
// an element per frame ($1 conversations, $2 turns, $3 seqs, $4 types,
// $5 data, $6 ends, $7 tool results), $8 the frames kept and $9 the bytes
// kept; it returns a row (conversation, turn, lower, latest, ended) for
// each frame stored.
const sqlAppendBatch = `WITH RECURSIVE req AS (
	SELECT r.*, coalesce(p.off, 0) AS off
	FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bytea[], $6::bool[], $7::bool[])
		AS r(conversation_id, turn_id, seq, type, data, ends, tool_result)
	LEFT JOIN LATERAL (SELECT byte_offset + octet_length(data) AS off FROM pgstore_replay_frames
		WHERE conversation_id = r.conversation_id AND turn_id = r.turn_id AND seq = r.seq - 1 LIMIT 1) p ON true
), old AS (
	SELECT r.conversation_id, r.turn_id, t.lower FROM req r CROSS JOIN LATERAL (SELECT lower FROM pgstore_replay_turns
		WHERE conversation_id = r.conversation_id AND turn_id = r.turn_id LIMIT 1) t
), cut(conversation_id, turn_id, seq, x) AS (
	SELECT r.conversation_id, r.turn_id, o.lower + 1, r.off + octet_length(r.data) - $9
	FROM req r JOIN old o USING (conversation_id, turn_id) WHERE $9::bigint >= 0
	UNION ALL
	SELECT c.conversation_id, c.turn_id, c.seq + 1, c.x FROM cut c CROSS JOIN LATERAL (SELECT byte_offset FROM pgstore_replay_frames
		WHERE conversation_id = c.conversation_id AND turn_id = c.turn_id AND seq = c.seq LIMIT 1) f
	WHERE f.byte_offset < c.x
), cuts AS (
	SELECT conversation_id, turn_id, max(seq) - 1 AS lower FROM cut GROUP BY conversation_id, turn_id
), moved AS (
	UPDATE pgstore_replay_turns t
	SET latest = r.seq, ended = t.ended OR r.ends, appended_at = now(),
		lower = greatest(t.lower, CASE WHEN $8::bigint > 0 THEN r.seq - $8 ELSE 0 END, c.lower)
	FROM req r LEFT JOIN cuts c USING (conversation_id, turn_id)
	WHERE t.conversation_id = r.conversation_id AND t.turn_id = r.turn_id AND t.latest = r.seq - 1 AND (NOT t.ended OR r.tool_result)
	RETURNING t.conversation_id, t.turn_id, t.lower, t.latest, t.ended
), created AS (
	INSERT INTO pgstore_replay_turns (conversation_id, turn_id, latest, ended)
	SELECT r.conversation_id, r.turn_id, r.seq, r.ends FROM req r
	WHERE r.seq = 1 AND NOT EXISTS (SELECT FROM moved m WHERE m.conversation_id = r.conversation_id AND m.turn_id = r.turn_id)
	ON CONFLICT DO NOTHING
	RETURNING conversation_id, turn_id, lower, latest, ended
), turn AS (
	SELECT * FROM moved UNION ALL SELECT * FROM created
), frame AS (
	INSERT INTO pgstore_replay_frames (conversation_id, turn_id, seq, type, data, byte_offset)
	SELECT r.conversation_id, r.turn_id, r.seq, r.type, r.data, r.off FROM turn t JOIN req r USING (conversation_id, turn_id)
), dropped AS MATERIALIZED (
	SELECT t.conversation_id, t.turn_id, o.lower AS above, t.lower AS upto FROM turn t JOIN old o USING (conversation_id, turn_id)
	WHERE t.lower > o.lower
), trimmed AS (
	DELETE FROM pgstore_replay_frames f USING dropped d
	WHERE f.conversation_id = d.conversation_id AND f.turn_id = d.turn_id AND f.seq > d.above AND f.seq <= d.upto
)
SELECT conversation_id, turn_id, lower, latest, ended FROM turn`

// send runs batch (one frame per turn) in one statement, its own
// transaction, and answers each request: its bounds, pgx.ErrNoRows when
// the seq or the end rule refused its frame (the others are still
// stored), fallback when the server failed a statement of several frames
// (nothing of it was stored; each append then runs alone, with its own
// retries and errors), or the error of a connection that broke, after
// which each outcome is unknown. A batch of one frame runs alone, with
// retries, and answers the server's error as it is.
func (q *appendBatcher) send(batch []*appendRequest) {
	ctx, cancel := context.WithTimeout(q.w.ctx, q.w.queryTimeout)
	defer cancel()
	if len(batch) == 1 {
		// Alone already: the one-frame statement, cheaper than the
		// arrays, with its retries; nothing to fall back to.
		r := batch[0]
		r.err = q.w.retry(ctx, func() error { return q.w.appendAlone(ctx, r) })
		close(r.done)
		return
	}
	n := len(batch)
	convs, turns, types := make([]string, n), make([]string, n), make([]string, n)
	seqs, data := make([]int64, n), make([][]byte, n)
	ends, toolResults := make([]bool, n), make([]bool, n)
	byKey := make(map[replay.Key]*appendRequest, n)
	for i, r := range batch {
		convs[i], turns[i], seqs[i], types[i], data[i] = r.key.ConversationID, r.key.TurnID, r.seq, r.typ, r.data
		ends[i], toolResults[i] = r.ends, r.toolResult
		byKey[r.key] = r
		r.err = pgx.ErrNoRows // until its row comes back
	}
	rows, err := q.w.pool.Query(ctx, sqlAppendBatch, convs, turns, seqs, types, data, ends, toolResults, int64(max(q.w.maxFrames, 0)), int64(q.w.maxBytes))
	if err == nil {
		var key replay.Key
		var lower, latest int64
		var ended bool
		_, err = pgx.ForEachRow(rows, []any{&key.ConversationID, &key.TurnID, &lower, &latest, &ended}, func() error {
			if r, ok := byKey[key]; ok {
				r.bounds = replay.Bounds{Lower: lower, Latest: latest, Ended: ended}
				r.err = nil
			}
			return nil
		})
	}
	var pgErr *pgconn.PgError
	for _, r := range batch {
		switch {
		case err == nil:
		case errors.As(err, &pgErr):
			r.err, r.fallback = nil, true
		default:
			r.err = err
		}
		close(r.done)
	}
}
