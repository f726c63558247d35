package pgstore

import (
	"context"
	"fmt"
	"time"
)

// The defaults of the age retention of [WindowOptions].
const (
	// DefaultWindowMaxAge is how long a turn's frames are kept after its
	// newest frame: 1 hour, as [replay.DefaultMaxAge].
	DefaultWindowMaxAge = time.Hour
	// DefaultWindowEndedTTL is how long an ended turn's frames are kept
	// after its last frame: 5 minutes, as [replay.DefaultEndedTTL].
	DefaultWindowEndedTTL = 5 * time.Minute
	// DefaultTombstoneTTL is how long the bounds of a trimmed turn are
	// kept after its last frame: 24 hours.
	DefaultTombstoneTTL = 24 * time.Hour
	// DefaultTrimInterval is the time between two runs of Trim by each
	// Window: 1 minute.
	DefaultTrimInterval = time.Minute
)

// trimStatement moves lower to latest, and deletes the frames it drops, for
// every turn whose newest frame is older than $1 seconds, or $2 seconds
// when the turn has ended: what is left is a tombstone, (latest, latest],
// so that a reconnect is told stale-cursor and a writer continues at
// latest+1. A concurrent Append of the same turn waits for the row and
// then stores its frame above the new lower. It returns the turns trimmed.
const trimStatement = `WITH old AS (
	UPDATE pgstore_replay_turns SET lower = latest
	WHERE lower < latest AND (appended_at < now() - make_interval(secs => $1)
		OR (ended AND appended_at < now() - make_interval(secs => $2)))
	RETURNING conversation_id, turn_id, latest
), gone AS (
	DELETE FROM pgstore_replay_frames f USING old
	WHERE f.conversation_id = old.conversation_id AND f.turn_id = old.turn_id AND f.seq <= old.latest
)
SELECT count(*) FROM old`

// tombstoneStatement deletes the turns, and their frames, whose newest
// frame is older than $1 seconds: the window forgets them (a reconnect is
// an unknown turn). It returns the turns deleted.
const tombstoneStatement = `WITH forgotten AS (
	DELETE FROM pgstore_replay_turns WHERE appended_at < now() - make_interval(secs => $1)
	RETURNING conversation_id, turn_id
), gone AS (
	DELETE FROM pgstore_replay_frames f USING forgotten
	WHERE f.conversation_id = forgotten.conversation_id AND f.turn_id = forgotten.turn_id
)
SELECT count(*) FROM forgotten`

// TrimResult is what one Trim did.
type TrimResult struct {
	Trimmed   int64 // turns whose frames were dropped: tombstones now
	Forgotten int64 // turns deleted, bounds and all
}

// Trim applies the age retention of the Window's options once, to every
// turn of the database: the frames of a turn whose newest frame is older
// than MaxAge (EndedTTL once it has ended) are deleted and its lower bound
// moved to its latest seq, never opening a gap; a turn older than
// TombstoneTTL is deleted. Every Window runs it each TrimInterval; running
// it from several instances at once is safe. It returns the database's
// error.
func (w *Window) Trim(ctx context.Context) (TrimResult, error) {
	var r TrimResult
	if err := w.pool.QueryRow(ctx, trimStatement, w.maxAge.Seconds(), w.endedTTL.Seconds()).Scan(&r.Trimmed); err != nil {
		return r, fmt.Errorf("pgstore: trim: %w", err)
	}
	if w.tombstoneTTL > 0 {
		if err := w.pool.QueryRow(ctx, tombstoneStatement, w.tombstoneTTL.Seconds()).Scan(&r.Forgotten); err != nil {
			return r, fmt.Errorf("pgstore: trim: %w", err)
		}
	}
	return r, nil
}

// trimLoop runs Trim every trimInterval until the Window closes.
func (w *Window) trimLoop() {
	every(w.ctx, w.trimInterval, func() {
		ctx, cancel := context.WithTimeout(w.ctx, w.queryTimeout)
		defer cancel()
		if _, err := w.Trim(ctx); err != nil && w.ctx.Err() == nil && w.log != nil {
			w.log.Warn("pgstore: window trim failed", "err", err)
		}
	})
}
