package pgstore

import (
	"context"
	"errors"
	"math"
	"sort"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// readStatement returns a turn's bounds and its retained frames after $3,
// in seq order, in one statement: one snapshot, so the frames are exactly
// those the bounds promise. No row is an unknown turn; a row whose frame
// columns are NULL is a turn with no frame after $3.
const readStatement = `SELECT t.lower, t.latest, t.ended, f.seq, f.type, f.data
FROM pgstore_replay_turns t
LEFT JOIN pgstore_replay_frames f
	ON f.conversation_id = t.conversation_id AND f.turn_id = t.turn_id AND f.seq > greatest($3, t.lower)
WHERE t.conversation_id = $1 AND t.turn_id = $2
ORDER BY f.seq`

// query runs readStatement: key's bounds and the frames after after.
func (w *Window) query(ctx context.Context, key replay.Key, after uint64) (replay.Bounds, []replay.Frame, error) {
	rows, err := w.pool.Query(ctx, readStatement, key.ConversationID, key.TurnID, int64(min(after, math.MaxInt64)))
	if err != nil {
		return replay.Bounds{}, nil, err
	}
	defer rows.Close()
	var b replay.Bounds
	var frames []replay.Frame
	for rows.Next() {
		var lower, latest int64
		var seq *int64
		var typ *string
		var data []byte
		if err := rows.Scan(&lower, &latest, &b.Ended, &seq, &typ, &data); err != nil {
			return replay.Bounds{}, nil, err
		}
		b.Lower, b.Latest = uint64(lower), uint64(latest)
		if seq != nil {
			frames = append(frames, replay.Frame{Seq: uint64(*seq), Type: *typ, Data: data})
		}
	}
	if err := rows.Err(); err != nil {
		return replay.Bounds{}, nil, err
	}
	return b, frames, nil
}

// fetcher is the queue of reads of one turn in this process. Reads join
// the next statement that starts after they were queued, never one already
// running: its snapshot might precede them.
type fetcher struct {
	queue []*fetchRequest
}

type fetchRequest struct {
	after  uint64 // math.MaxUint64: the bounds only
	result chan fetchResult
}

type fetchResult struct {
	b      replay.Bounds
	frames []replay.Frame // the frames after from
	from   uint64
	err    error
}

// boundsOnly is the cursor of a fetch that wants no frame.
const boundsOnly = math.MaxUint64

// fetch returns key's bounds and, unless after is boundsOnly, the frames
// after after, from a statement that started after the call, shared with
// every other fetch of key queued meanwhile.
func (w *Window) fetch(ctx context.Context, key replay.Key, after uint64) (replay.Bounds, []replay.Frame, error) {
	req := &fetchRequest{after: after, result: make(chan fetchResult, 1)}
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
	if res.err != nil || after == boundsOnly {
		return res.b, nil, res.err
	}
	frames := res.frames
	if after > res.from {
		i := sort.Search(len(frames), func(i int) bool { return frames[i].Seq > after })
		frames = frames[i:len(frames):len(frames)]
	}
	return res.b, frames, nil
}

// runFetches runs the queued reads of key, one statement per batch, until
// the queue is empty.
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
		from := uint64(boundsOnly)
		for _, r := range batch {
			from = min(from, r.after)
		}
		ctx, cancel := context.WithTimeout(w.ctx, w.queryTimeout)
		var b replay.Bounds
		var frames []replay.Frame
		err := w.retry(ctx, func() error { // a serializable read may be rolled back too
			var err error
			b, frames, err = w.query(ctx, key, from)
			return err
		})
		cancel()
		if err != nil && w.ctx.Err() != nil {
			err = errClosed
		}
		for _, r := range batch {
			r.result <- fetchResult{b: b, frames: frames, from: from, err: err}
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
	var since time.Time
	for pause := 20 * time.Millisecond; ; pause = min(2*pause, 500*time.Millisecond) {
		err := op()
		if err == nil || ctx.Err() != nil || !unreachable(err) || w.patience < 0 {
			return err
		}
		if since.IsZero() {
			since = time.Now()
		} else if time.Since(since) > w.patience {
			return err
		}
		if err := sleepCtx(ctx, w.ctx, pause); err != nil {
			return err
		}
	}
}

// sleepCtx waits d, or until ctx (its error) or the window (errClosed)
// ends.
func sleepCtx(ctx, window context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-window.Done():
		return errClosed
	case <-t.C:
		return nil
	}
}

// Read returns key's bounds and the complete retained suffix after after,
// in seq order (see replay.Window.Read), from one statement that started
// after the call: every frame whose Append returned before the call, on
// any instance, is in it. Refusals are *replay.CursorError with the bounds
// (stale-cursor, cursor-ahead). While the database cannot be reached, Read
// retries for WindowOptions.Patience, then returns the error. The frames'
// Data are shared with the other readers of this process: never modify
// them.
func (w *Window) Read(ctx context.Context, key replay.Key, after uint64) (replay.Bounds, []replay.Frame, error) {
	if err := ctx.Err(); err != nil {
		return replay.Bounds{}, nil, err
	}
	var b replay.Bounds
	var frames []replay.Frame
	err := w.patient(ctx, func() error {
		var err error
		b, frames, err = w.fetch(ctx, key, after)
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

// Wait blocks until key's turn holds a frame after after, or has ended, or
// ctx is done (its error), and returns the bounds then (see
// replay.Window.Wait). It registers with the listener first, then reads
// the bounds (the catch-up read: a frame committed before the call returns
// at once). On each notification of key, the Window reads the bounds once
// for all of its readers of key, in a statement that starts after the
// notification arrived, and wakes them with the result. On every reconnect
// of the listener (notifications may have been lost while it was away)
// and every WindowOptions.CatchUpInterval, each reader reads again. While
// the database cannot be reached it keeps waiting, for
// WindowOptions.Patience.
func (w *Window) Wait(ctx context.Context, key replay.Key, after uint64) (replay.Bounds, error) {
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
			nb, _, err := w.fetch(ctx, key, boundsOnly)
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
		b, _, err := w.fetch(w.ctx, key, boundsOnly)
		w.lis.publish(key, b, err == nil)
	})
}
