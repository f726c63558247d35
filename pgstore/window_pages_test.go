package pgstore

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// sizedFrame is frame seq of key's turn, a delta whose canonical JSON
// takes about n bytes, and its stored bytes.
func sizedFrame(t *testing.T, key replay.Key, seq int64, n int) ([]byte, *appendRequest) {
	t.Helper()
	env := testEnvelope(key, seq, strings.Repeat("x", max(n-150, 1)))
	f, err := replay.EncodeFrame(env, -1)
	require.NoError(t, err)
	return f.Data, &appendRequest{key: key, seq: seq, typ: f.Type, data: f.Data, done: make(chan struct{})}
}

// retainedLower is the lower bound byte and count retention give a turn
// of frames sizes[0..n-1] (seq i+1 is sizes[i]) whose lower was prev: the
// smallest lower at or above prev such that the frames above it take at
// most maxBytes and number at most maxFrames, keeping the newest frame
// whatever its size.
func retainedLower(sizes []int, prev int64, maxFrames, maxBytes int) int64 {
	n := int64(len(sizes))
	lower := prev
	if maxFrames > 0 {
		lower = max(lower, n-int64(maxFrames))
	}
	sum := 0
	for _, s := range sizes[lower:] {
		sum += s
	}
	for maxBytes >= 0 && lower < n-1 && sum > maxBytes {
		sum -= sizes[lower]
		lower++
	}
	return lower
}

// TestWindowRetainsBytes: with MaxBytes, every Append, alone or in a
// batch, leaves Lower at the smallest cursor above which the frames fit
// (with MaxFrames, the larger of both lowers), keeps the newest frame
// whatever its size, and serves Lower+1 through Latest as appended;
// Lower-1 is stale-cursor and Bounds agrees.
func TestWindowRetainsBytes(t *testing.T) {
	sizes := []int{900, 300, 2500, 400, 400, 400, 5000, 200, 200, 200, 200, 1200, 600, 300, 3100, 250}
	for _, tc := range []struct {
		name                string
		maxFrames, maxBytes int
		iso                 pgx.TxIsoLevel
	}{
		{"bytes", -1, 3000, pgx.ReadCommitted},
		{"bytes-serializable", -1, 3000, pgx.Serializable},
		{"bytes-and-frames", 4, 3000, pgx.ReadCommitted},
		{"below-every-frame", -1, 100, pgx.ReadCommitted},
		{"no-byte-bound", -1, -1, pgx.ReadCommitted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newTestWindow(t, tc.iso, WindowOptions{MaxFrames: tc.maxFrames, MaxBytes: tc.maxBytes})
			conv := "c-bytes-" + randomSuffix()
			// alone: one Append at a time (a batch of one runs the
			// single statement); batch: three turns per batch statement.
			alone := replay.Key{ConversationID: conv, TurnID: "alone"}
			batched := []replay.Key{{ConversationID: conv, TurnID: "b0"}, {ConversationID: conv, TurnID: "b1"}, {ConversationID: conv, TurnID: "b2"}}
			data := map[replay.Key][][]byte{}
			lens := map[replay.Key][]int{}
			lower := map[replay.Key]int64{}
			check := func(key replay.Key, got replay.Bounds) {
				t.Helper()
				seq := int64(len(lens[key]))
				lower[key] = retainedLower(lens[key], lower[key], tc.maxFrames, tc.maxBytes)
				want := replay.Bounds{Lower: lower[key], Latest: seq}
				require.Equal(t, want, got, "%s after seq %d", key.TurnID, seq)
				b, err := w.Bounds(t.Context(), key)
				require.NoError(t, err)
				require.Equal(t, want, b)
				frames := readAll(t, w, key, want.Lower, 2000)
				require.Len(t, frames, int(seq-want.Lower))
				for _, f := range frames {
					require.Equal(t, data[key][f.Seq-1], f.Data, "seq %d as appended", f.Seq)
				}
				if want.Lower > 0 {
					b, _, err := w.Read(t.Context(), key, want.Lower-1, replay.DefaultPageBytes)
					require.ErrorIs(t, err, refusal.ErrStaleCursor)
					require.Equal(t, want, b)
				}
			}
			for i, size := range sizes {
				seq := int64(i + 1)
				d, _ := sizedFrame(t, alone, seq, size)
				f, err := w.Append(t.Context(), alone, testEnvelope(alone, seq, strings.Repeat("x", max(size-150, 1))))
				require.NoError(t, err)
				require.Equal(t, d, f.Data)
				data[alone] = append(data[alone], d)
				lens[alone] = append(lens[alone], len(d))
				got, err := w.Bounds(t.Context(), alone)
				require.NoError(t, err)
				check(alone, got)

				var batch []*appendRequest
				for j, key := range batched {
					d, r := sizedFrame(t, key, seq, sizes[(i+j)%len(sizes)])
					data[key] = append(data[key], d)
					lens[key] = append(lens[key], len(d))
					batch = append(batch, r)
				}
				w.batcher.send(batch)
				for _, r := range batch {
					<-r.done
					require.NoError(t, r.err)
					require.False(t, r.fallback, "the batch statement stored the frames")
					check(r.key, r.bounds)
				}
			}
			if tc.maxBytes < 0 && tc.maxFrames < 0 {
				require.Zero(t, lower[alone], "no bound drops nothing")
			} else {
				require.Positive(t, lower[alone], "the bounds dropped frames")
			}
		})
	}
}

// TestWindowMaxBytesDefault: 0 is DefaultWindowMaxBytes, a negative
// value no bound.
func TestWindowMaxBytesDefault(t *testing.T) {
	pool := newPool(t, poolOpts{})
	for in, want := range map[int]int{0: DefaultWindowMaxBytes, -7: -1, 5000: 5000} {
		w, err := NewWindow(pool, &WindowOptions{MaxBytes: in, TrimInterval: -1})
		require.NoError(t, err)
		require.Equal(t, want, w.maxBytes, "MaxBytes %d", in)
		w.Close()
	}
}

// TestWindowReadsOnePageOnly: the read statement returns the frames of
// the pages asked for, each once, and none beyond: never the rest of the
// suffix.
func TestWindowReadsOnePageOnly(t *testing.T) {
	w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{})
	key := replay.Key{ConversationID: "c-page-" + randomSuffix(), TurnID: "t"}
	const n = 60
	var lens []int
	for seq := int64(1); seq <= n; seq++ {
		size := 200 + int(seq%7)*300
		if seq == 20 {
			size = 9000 // larger than the limits below: a page alone
		}
		_, r := sizedFrame(t, key, seq, size)
		w.batcher.send([]*appendRequest{r})
		<-r.done
		require.NoError(t, r.err)
		lens = append(lens, len(r.data))
	}
	// want is the page rule over lens: after+1, … while they fit.
	want := func(after, limit int64) []int64 {
		var seqs []int64
		size := 0
		for s := after + 1; s <= n; s++ {
			size += lens[s-1]
			if s > after+1 && int64(size) > limit {
				break
			}
			seqs = append(seqs, s)
		}
		return seqs
	}
	for _, pages := range [][]pageRequest{
		{{0, 1}},
		{{0, 3000}},
		{{17, 3000}}, // the 9,000-byte frame 20 ends it
		{{19, 3000}}, // frame 20 alone
		{{19, 100000}},
		{{0, 2500}, {1, 2500}, {40, 4000}}, // overlapping pages and one apart
		{{55, math.MaxInt64}},
		{{n, 3000}},            // at Latest: nothing
		{{n + 5, 3000}},        // ahead: nothing
		{{-1, 3000}},           // below Lower: nothing
		{{0, 3000}, {0, 3000}}, // the same page twice: once
	} {
		b, frames, err := w.query(t.Context(), key, pages)
		require.NoError(t, err)
		require.Equal(t, replay.Bounds{Latest: n}, b)
		seen := map[int64]bool{}
		for _, p := range pages {
			if p.after < 0 {
				continue // stale: Read refuses it
			}
			for _, s := range want(p.after, p.limit) {
				seen[s] = true
			}
			var got []int64
			for _, f := range pageOf(frames, p.after, p.limit) {
				got = append(got, f.Seq)
			}
			require.Equal(t, want(p.after, p.limit), got, "page %v", p)
		}
		var got []int64
		for i, f := range frames {
			got = append(got, f.Seq)
			require.Equal(t, lens[f.Seq-1], len(f.Data))
			if i > 0 {
				require.Greater(t, f.Seq, frames[i-1].Seq, "in seq order, each once")
			}
			require.True(t, seen[f.Seq], "pages %v: seq %d is in none of them", pages, f.Seq)
		}
		require.Len(t, got, len(seen), "pages %v: every frame of every page", pages)
	}
}

// TestWindowReturnsOnContextWhileStalled: while the database stalls (a
// session holds the window's tables in ACCESS EXCLUSIVE mode, so that
// every statement waits for the lock; the wait is seen in
// pg_stat_activity), Read, Bounds, Wait and an Append already on the
// wire return their context's error within a few hundredths of a second
// of its end, far below QueryTimeout; once the lock is gone they work.
func TestWindowReturnsOnContextWhileStalled(t *testing.T) {
	schema := freshSchema(t)
	pool := newPool(t, poolOpts{searchPath: schema, maxConns: 12})
	w, err := NewWindow(pool, &WindowOptions{TrimInterval: -1, CatchUpInterval: -1, QueryTimeout: time.Minute, Patience: time.Minute})
	require.NoError(t, err)
	t.Cleanup(w.Close)
	// A turn per call: the reads of one turn share a statement, and each
	// call must leave one of its own waiting.
	conv := "c-stall-" + randomSuffix()
	keys := make([]replay.Key, 4)
	for i := range keys {
		keys[i] = replay.Key{ConversationID: conv, TurnID: "t" + itoa(i)}
		_, err = w.Append(t.Context(), keys[i], testEnvelope(keys[i], 1, "one"))
		require.NoError(t, err)
	}

	locker := newPool(t, poolOpts{searchPath: schema})
	tx, err := locker.Begin(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	_, err = tx.Exec(t.Context(), "LOCK TABLE pgstore_replay_turns, pgstore_replay_frames IN ACCESS EXCLUSIVE MODE")
	require.NoError(t, err)
	waiting := func() int {
		var n int
		require.NoError(t, locker.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n))
		return n
	}

	const budget = 150 * time.Millisecond
	calls := []struct {
		name string
		call func(ctx context.Context) error
	}{
		{"Read", func(ctx context.Context) error {
			_, _, err := w.Read(ctx, keys[0], 0, replay.DefaultPageBytes)
			return err
		}},
		{"Bounds", func(ctx context.Context) error { _, err := w.Bounds(ctx, keys[1]); return err }},
		{"Wait", func(ctx context.Context) error { _, err := w.Wait(ctx, keys[2], 1); return err }},
		{"Append", func(ctx context.Context) error {
			_, err := w.Append(ctx, keys[3], testEnvelope(keys[3], 2, "two"))
			return err
		}},
	}
	for _, c := range calls {
		stalled := waiting()
		ctx, cancel := context.WithTimeout(t.Context(), budget)
		start := time.Now()
		err := c.call(ctx)
		took := time.Since(start)
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded, c.name)
		require.Less(t, took, budget+500*time.Millisecond, "%s returned %v after its context ended", c.name, took-budget)
		require.Greater(t, waiting(), stalled, "%s left a statement waiting for the lock: the database did stall it", c.name)
		t.Logf("%s returned %v after its context ended (a %v timeout), its statement still waiting for the lock", c.name, took-budget, budget)
	}

	require.NoError(t, tx.Rollback(t.Context()))
	require.Eventually(t, func() bool { return waiting() == 0 }, 10*time.Second, 5*time.Millisecond)
	for _, key := range keys[:3] {
		b, err := w.Bounds(t.Context(), key)
		require.NoError(t, err)
		require.Equal(t, replay.Bounds{Latest: 1}, b)
		require.Len(t, readAll(t, w, key, 0, replay.DefaultPageBytes), int(b.Latest))
	}
	// The Append cut off by its context was stored or not: either way no
	// gap. Its statement, no longer waiting for the lock, may still be
	// committing: the bounds and the frames agree once it is done.
	require.Eventually(t, func() bool {
		b, err := w.Bounds(t.Context(), keys[3])
		require.NoError(t, err)
		require.Contains(t, []int64{1, 2}, b.Latest)
		return len(readAll(t, w, keys[3], 0, replay.DefaultPageBytes)) == int(b.Latest)
	}, 10*time.Second, 10*time.Millisecond)
}

// TestMigration6BacksFillOffsets: frames stored before migration 6 get
// byte offsets that chain within each turn, so that pages and byte
// retention work on them.
func TestMigration6BacksFillOffsets(t *testing.T) {
	schema := freshSchema(t)
	pool := newPool(t, poolOpts{searchPath: schema})
	ctx := t.Context()
	_, err := pool.Exec(ctx, "ALTER TABLE pgstore_replay_frames DROP COLUMN byte_offset; DELETE FROM pgstore_schema_migrations WHERE version >= 6")
	require.NoError(t, err)
	lens := map[string][]int{"a": {10, 250, 7}, "b": {4000}}
	for turn, ls := range lens {
		_, err := pool.Exec(ctx, "INSERT INTO pgstore_replay_turns (conversation_id, turn_id, latest) VALUES ('c', $1, $2)", turn, len(ls))
		require.NoError(t, err)
		for i, l := range ls {
			_, err := pool.Exec(ctx, "INSERT INTO pgstore_replay_frames (conversation_id, turn_id, seq, type, data) VALUES ('c', $1, $2, 'delta', $3)",
				turn, i+1, []byte(strings.Repeat("y", l)))
			require.NoError(t, err)
		}
	}
	require.NoError(t, Migrate(ctx, pool))
	for turn, ls := range lens {
		rows, err := pool.Query(ctx, "SELECT byte_offset FROM pgstore_replay_frames WHERE conversation_id = 'c' AND turn_id = $1 ORDER BY seq", turn)
		require.NoError(t, err)
		offs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		require.NoError(t, err)
		want, sum := []int64{}, int64(0)
		for _, l := range ls {
			want = append(want, sum)
			sum += int64(l)
		}
		require.Equal(t, want, offs, "turn %s", turn)
	}
}
