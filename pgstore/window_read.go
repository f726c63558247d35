package pgstore

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/Papercusp/chat-protocol-go/internal/patience"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// readStatement returns a turn's bounds and, for each cursor of $3 within
// them, the page after it of at most the bytes of $4 at the same index
// (at least one frame), in one statement: one snapshot, so the frames are
// exactly those the bounds promise. Each page is walked frame by frame, a
// key lookup each, summing octet_length(data) (the stored length: nothing
// is detoasted) until the next frame would not fit: as many steps as the
// page has frames, plus one, whatever follows. The rows are the frames of
// the pages, each once, in seq order. Every frame is found by its key in a
// LATERAL subquery whose LIMIT keeps the planner, generic plans included,
// from scanning the turn's frames instead; no row is an unknown turn, and a row whose frame columns are NULL is a turn with no frame to
// return.
const readStatement = `WITH RECURSIVE t AS (
	SELECT lower, latest, ended FROM pgstore_replay_turns WHERE conversation_id = $1 AND turn_id = $2
), q AS (
	SELECT DISTINCT q.after, q.lim FROM t, unnest($3::bigint[], $4::bigint[]) AS q(after, lim)
	WHERE q.after >= t.lower AND q.after < t.latest
), page(after, lim, seq, size) AS (
	SELECT q.after, q.lim, f.seq, f.size FROM q CROSS JOIN LATERAL (SELECT seq, octet_length(data)::bigint AS size
		FROM pgstore_replay_frames WHERE conversation_id = $1 AND turn_id = $2 AND seq = q.after + 1 LIMIT 1) f
	UNION ALL
	SELECT p.after, p.lim, f.seq, p.size + f.size FROM page p CROSS JOIN LATERAL (SELECT seq, octet_length(data) AS size
		FROM pgstore_replay_frames WHERE conversation_id = $1 AND turn_id = $2 AND seq = p.seq + 1 LIMIT 1) f
	WHERE p.size + f.size <= p.lim
), want AS (
	SELECT DISTINCT seq FROM page
)
SELECT t.lower, t.latest, t.ended, f.seq, f.type, f.data
FROM t LEFT JOIN (want CROSS JOIN LATERAL (SELECT seq, type, data FROM pgstore_replay_frames
	WHERE conversation_id = $1 AND turn_id = $2 AND seq = want.seq LIMIT 1) f) ON true
ORDER BY f.seq`

// boundsStatement returns a turn's bounds; no row is an unknown turn.
const boundsStatement = `SELECT lower, latest, ended FROM pgstore_replay_turns WHERE conversation_id = $1 AND turn_id = $2`

// pageRequest is a page to read: the frames after after, up to limit
// bytes (at least one).
type pageRequest struct {
	after, limit int64
}

// query returns key's bounds and the frames of the pages after each
// cursor of pages, each frame once, in seq order; without pages, the
// bounds alone.
func (w *Window) query(ctx context.Context, key replay.Key, pages []pageRequest) (replay.Bounds, []replay.Frame, error) {
	var b replay.Bounds
	if len(pages) == 0 {
		err := w.pool.QueryRow(ctx, boundsStatement, key.ConversationID, key.TurnID).Scan(&b.Lower, &b.Latest, &b.Ended)
		if errors.Is(err, pgx.ErrNoRows) {
			return replay.Bounds{}, nil, nil
		}
		return b, nil, err
	}
	afters, limits := make([]int64, len(pages)), make([]int64, len(pages))
	for i, p := range pages {
		afters[i], limits[i] = p.after, p.limit
	}
	rows, err := w.pool.Query(ctx, readStatement, key.ConversationID, key.TurnID, afters, limits)
	if err != nil {
		return replay.Bounds{}, nil, err
	}
	defer rows.Close()
	var frames []replay.Frame
	for rows.Next() {
		var seq *int64
		var typ *string
		var data []byte
		if err := rows.Scan(&b.Lower, &b.Latest, &b.Ended, &seq, &typ, &data); err != nil {
			return replay.Bounds{}, nil, err
		}
		if seq != nil {
			frames = append(frames, replay.Frame{Seq: *seq, Type: *typ, Data: data})
		}
	}
	if err := rows.Err(); err != nil {
		return replay.Bounds{}, nil, err
	}
	return b, frames, nil
}

// pageOf returns the page after after of at most limit bytes (at least
// one frame) out of frames, the pages query returned: the frames after+1,
// after+2, … as long as they are there and fit. The page shares frames'
// array, its capacity cut to its length.
func pageOf(frames []replay.Frame, after, limit int64) []replay.Frame {
	i := sort.Search(len(frames), func(i int) bool { return frames[i].Seq > after })
	j, size := i, int64(0)
	for ; j < len(frames) && frames[j].Seq == after+1+int64(j-i); j++ {
		size += int64(len(frames[j].Data))
		if j > i && size > limit {
			break
		}
	}
	if j == i {
		return nil
	}
	return frames[i:j:j]
}

// fetcher is the queue of reads of one turn in this process. Reads join
// the next statement that starts after they were queued, never one already
// running: its snapshot might precede them.
type fetcher struct {
	queue []*fetchRequest
}

type fetchRequest struct {
	page   pageRequest
	bounds bool // the bounds only: page unused
	result chan fetchResult
}

type fetchResult struct {
	b      replay.Bounds
	frames []replay.Frame // the frames of every page of the statement
	err    error
}

// fetch returns key's bounds and, unless boundsOnly, the page after after
// of at most limit bytes, from a statement that started after the call,
// shared with every other fetch of key queued meanwhile. It returns ctx's
// error as soon as ctx is done, whatever the statement is doing.
func (w *Window) fetch(ctx context.Context, key replay.Key, after, limit int64, boundsOnly bool) (replay.Bounds, []replay.Frame, error) {
	req := &fetchRequest{page: pageRequest{after: after, limit: max(limit, 1)}, bounds: boundsOnly, result: make(chan fetchResult, 1)}
	w.mu.Lock()
	if w.ctx.Err() != nil {
		w.mu.Unlock()
		return replay.Bounds{}, nil, errClosed
	}
	f, running := w.fetchers[key]
	if !running {
		f = &fetcher{}
		w.fetchers[key] = f
	}
	f.queue = append(f.queue, req)
	if !running {
		w.wg.Go(func() { w.runFetches(key, f) })
	}
	w.mu.Unlock()
	var res fetchResult
	select {
	case res = <-req.result:
	case <-ctx.Done():
		return replay.Bounds{}, nil, ctx.Err()
	}
	if res.err != nil || boundsOnly {
		return res.b, nil, res.err
	}
	return res.b, pageOf(res.frames, after, req.page.limit), nil
}

// runFetches runs the queued reads of key, one statement per batch, until
// the queue is empty. The statement is bounded by QueryTimeout and the
// Window's life, not by its readers' contexts: a reader whose context ends
// leaves without it.
func (w *Window) runFetches(key replay.Key, f *fetcher) {
	for {
		w.mu.Lock()
		batch := f.queue
		f.queue = nil
		if len(batch) == 0 {
			delete(w.fetchers, key)
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		var pages []pageRequest
		for _, r := range batch {
			if !r.bounds && !slices.Contains(pages, r.page) {
				pages = append(pages, r.page)
			}
		}
		ctx, cancel := context.WithTimeout(w.ctx, w.queryTimeout)
		var b replay.Bounds
		var frames []replay.Frame
		err := w.retry(ctx, func() error { // a serializable read may be rolled back too
			var err error
			b, frames, err = w.query(ctx, key, pages)
			return err
		})
		cancel()
		if err != nil && w.ctx.Err() != nil {
			err = errClosed
		}
		for _, r := range batch {
			r.result <- fetchResult{b: b, frames: frames, err: err}
		}
	}
}

// unreachable reports whether err says the database could not be reached
// or is restarting (a broken connection, a refused one, SQLSTATE classes 08
// and 57): worth retrying while WindowOptions.Patience lasts.
func unreachable(err error) bool {
	if err == nil || errors.Is(err, errClosed) {
		return false
	}
	if _, ok := errors.AsType[*replay.CursorError](err); ok {
		return false
	}
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok {
		return len(pe.Code) == 5 && (pe.Code[:2] == "08" || pe.Code[:2] == "57")
	}
	return true
}

// patient retries op while it fails with an unreachable database, for up
// to w.patience, with a growing pause; it returns op's last error, or
// ctx's.
func (w *Window) patient(ctx context.Context, op func() error) error {
	return patience.Retry(ctx, w.ctx, errClosed, w.patience, unreachable, op)
}

// Read returns key's bounds and one page of the retained suffix after
// after: the frames after+1, after+2, … that fit in limit bytes of data,
// at least one below Latest (see [replay.Window.Read]), from one statement
// that started after the call: every frame whose Append returned before
// the call, on any instance, is within reach. The statement reads that
// page only (readStatement), and the readers of a turn in this process
// share it. Refusals are [*replay.CursorError] with the bounds
// (stale-cursor, cursor-ahead). While the database cannot be reached, Read
// retries for [WindowOptions.Patience], then returns the error; it returns
// ctx's error as soon as ctx is done, even while the database stalls. The
// frames' Data are shared with the other readers of this process: never
// modify them.
func (w *Window) Read(ctx context.Context, key replay.Key, after int64, limit int) (replay.Bounds, []replay.Frame, error) {
	if err := ctx.Err(); err != nil {
		return replay.Bounds{}, nil, err
	}
	var b replay.Bounds
	var frames []replay.Frame
	err := w.patient(ctx, func() error {
		var err error
		b, frames, err = w.fetch(ctx, key, after, int64(limit), false)
		return err
	})
	if err != nil {
		return b, nil, err
	}
	if err := replay.CheckCursor(b, after); err != nil {
		return b, nil, err
	}
	return b, frames, nil
}

// Bounds returns key's bounds, read from the turn's row, which outlives
// its frames until TombstoneTTL (see [replay.Window.Bounds]), by a statement
// that started after the call, as Read. It retries and returns on ctx as
// Read does.
func (w *Window) Bounds(ctx context.Context, key replay.Key) (replay.Bounds, error) {
	if err := ctx.Err(); err != nil {
		return replay.Bounds{}, err
	}
	var b replay.Bounds
	err := w.patient(ctx, func() error {
		var err error
		b, _, err = w.fetch(ctx, key, 0, 0, true)
		return err
	})
	return b, err
}

// Wait blocks until key's turn holds a frame after after, or has ended, or
// ctx is done (its error), and returns the bounds then (see
// [replay.Window.Wait]). It registers with the listener first, then reads
// the bounds (the catch-up read: a frame committed before the call returns
// at once). On each notification of key, the Window reads the bounds once
// for all of its readers of key, in a statement that starts after the
// notification arrived, and wakes them with the result. On every reconnect
// of the listener (notifications may have been lost while it was away)
// and every [WindowOptions.CatchUpInterval], each reader reads again. While
// the database cannot be reached it keeps waiting, for
// [WindowOptions.Patience].
func (w *Window) Wait(ctx context.Context, key replay.Key, after int64) (replay.Bounds, error) {
	if err := ctx.Err(); err != nil {
		return replay.Bounds{}, err
	}
	wt := w.lis.watch(key)
	defer w.lis.unwatch(key, wt)
	wk := w.lis.next(wt)
	var b replay.Bounds
	var all <-chan struct{}
	var since time.Time // the start of a run of unreachable reads
	check := !w.flaws.noCatchUp
	pause := 20 * time.Millisecond
	for {
		var retry *time.Timer
		if check {
			all = w.lis.allSignal()
			nb, _, err := w.fetch(ctx, key, 0, 0, true)
			switch {
			case err == nil:
				b, since, pause = nb, time.Time{}, 20*time.Millisecond
				if b.Latest > after || b.Ended {
					return b, nil
				}
			case ctx.Err() != nil:
				return b, ctx.Err()
			case !unreachable(err) || w.patience < 0:
				return b, err
			default:
				if since.IsZero() {
					since = time.Now()
				} else if time.Since(since) > w.patience {
					return b, err
				}
				retry = time.NewTimer(pause)
				pause = min(2*pause, 500*time.Millisecond)
			}
		}
		var retryCh <-chan time.Time
		if retry != nil {
			retryCh = retry.C
		}
		check = true
		select {
		case <-wk.ch:
			if wk.ok { // bounds read after the notification: no read of our own
				if wk.b.Latest > after || wk.b.Ended {
					return wk.b, nil
				}
				b, check = wk.b, false
			}
			wk = wk.next
		case <-all:
		case <-retryCh:
		case <-ctx.Done():
			return b, ctx.Err()
		case <-w.ctx.Done():
			return b, errClosed
		}
		if retry != nil {
			retry.Stop()
		}
	}
}

// notified starts the read of key's bounds that a notification of key
// calls for, and publishes the result to key's readers (see Wait).
func (w *Window) notified(key replay.Key) {
	w.wg.Go(func() {
		b, _, err := w.fetch(w.ctx, key, 0, 0, true)
		w.lis.publish(key, b, err == nil)
	})
}
