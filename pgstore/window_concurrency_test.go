package pgstore

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/pgstore/internal/turnscript"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// storedSeqs reads back the seqs stored for key, page by page.
func storedSeqs(t *testing.T, w *Window, key replay.Key) []int64 {
	t.Helper()
	seqs := []int64{}
	for _, f := range readAll(t, w, key, 0, replay.DefaultPageBytes) {
		seqs = append(seqs, f.Seq)
	}
	return seqs
}

// readAll reads key's retained suffix after after page by page, pages of
// limit bytes, each checked against the page rule, until Latest.
func readAll(t *testing.T, w replay.Window, key replay.Key, after int64, limit int) []replay.Frame {
	t.Helper()
	var all []replay.Frame
	for {
		b, frames, err := w.Read(t.Context(), key, after, limit)
		require.NoError(t, err)
		if after == b.Latest {
			require.Empty(t, frames)
			return all
		}
		require.NotEmpty(t, frames, "a page below Latest holds a frame")
		size := 0
		for _, f := range frames {
			require.Equal(t, after+1, f.Seq, "pages are contiguous")
			after = f.Seq
			size += len(f.Data)
		}
		if len(frames) > 1 {
			require.LessOrEqual(t, size, max(limit, 1), "a page of several frames fits its limit")
		}
		all = append(all, frames...)
	}
}

// TestWindowClosedRightAfterAppendAnnounces: a Window closed as soon as
// its Append returned has still published the frame's notification, after
// the frame's commit: a session listening on the channel receives it.
func TestWindowClosedRightAfterAppendAnnounces(t *testing.T) {
	needDB(t)
	conn := listenConn(t)
	pool := newPool(t, poolOpts{maxConns: 4})
	key := replay.Key{ConversationID: "c-pub-" + randomSuffix(), TurnID: "t"}
	for seq := int64(1); seq <= 20; seq++ {
		w, err := NewWindow(pool, &WindowOptions{TrimInterval: -1, CatchUpInterval: -1})
		require.NoError(t, err)
		_, err = w.Append(t.Context(), key, turnscript.Envelope(key, seq, 1000))
		require.NoError(t, err)
		w.Close()
		awaitNotification(t, conn, key)
		// The frame was committed before its notification went out.
		var stored bool
		require.NoError(t, conn.QueryRow(t.Context(), `SELECT EXISTS (SELECT FROM pgstore_replay_frames WHERE conversation_id = $1 AND turn_id = $2 AND seq = $3)`,
			key.ConversationID, key.TurnID, seq).Scan(&stored))
		require.True(t, stored)
	}
}

// TestWindowConcurrentProducers: 16 producers of turns of their own
// and 4 producers racing on one shared turn, every
// turn of its own holds every frame once, in order; the shared turn holds
// seqs 1..n with no gap, each stored by exactly one producer.
func TestWindowConcurrentProducers(t *testing.T) {
	w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{})
	conv := "c-batch-" + randomSuffix()
	const producers, frames = 16, 40
	var wg sync.WaitGroup
	for p := range producers {
		key := replay.Key{ConversationID: conv, TurnID: "own-" + strconv.Itoa(p)}
		wg.Go(func() {
			for seq := int64(1); seq <= frames; seq++ {
				_, err := w.Append(t.Context(), key, turnscript.Envelope(key, seq, frames))
				require.NoError(t, err)
			}
		})
	}
	shared := replay.Key{ConversationID: conv, TurnID: "shared"}
	var mu sync.Mutex
	won := map[int64]int{}
	for range 4 {
		wg.Go(func() {
			for seq := int64(1); seq <= frames; seq++ {
				if _, err := w.Append(t.Context(), shared, turnscript.Envelope(shared, seq, frames)); err == nil {
					mu.Lock()
					won[seq]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	want := make([]int64, frames)
	for i := range want {
		want[i] = int64(i + 1)
	}
	for p := range producers {
		require.Equal(t, want, storedSeqs(t, w, replay.Key{ConversationID: conv, TurnID: "own-" + strconv.Itoa(p)}))
	}
	require.Equal(t, want, storedSeqs(t, w, shared))
	for seq := int64(1); seq <= frames; seq++ {
		require.Equal(t, 1, won[seq], "seq %d", seq)
	}
}

// batchRequest is the request Append makes for seq of key's scripted turn
// of n frames.
func batchRequest(t *testing.T, key replay.Key, seq, n int64) *appendRequest {
	t.Helper()
	env := turnscript.Envelope(key, seq, n)
	f, err := replay.EncodeFrame(env, 0)
	require.NoError(t, err)
	return &appendRequest{key: key, seq: seq, typ: f.Type, data: f.Data, ends: replay.EndsTurn(env), done: make(chan struct{})}
}

// TestWindowBatchTakesOneFramePerTurn: a batch holds the oldest frame of
// each turn queued; a turn's later frames stay queued, in order.
func TestWindowBatchTakesOneFramePerTurn(t *testing.T) {
	a, b, c := replay.Key{ConversationID: "c", TurnID: "a"}, replay.Key{ConversationID: "c", TurnID: "b"}, replay.Key{ConversationID: "c", TurnID: "c"}
	a1, a2, b1, c1, a3, b2 := batchRequest(t, a, 1, 9), batchRequest(t, a, 2, 9), batchRequest(t, b, 1, 9), batchRequest(t, c, 1, 9), batchRequest(t, a, 3, 9), batchRequest(t, b, 2, 9)
	q := &appendBatcher{queue: []*appendRequest{a1, a2, b1, c1, a3, b2}}
	require.Equal(t, []*appendRequest{a1, b1, c1}, q.take())
	require.Equal(t, []*appendRequest{a2, a3, b2}, q.queue)
	require.Equal(t, []*appendRequest{a2, b2}, q.take())
	require.Equal(t, []*appendRequest{a3}, q.take())
	require.Nil(t, q.take())
}

// TestWindowBatchRefusalStoresTheOthers: in a batch, a frame the seq rule
// refuses answers pgx.ErrNoRows alone; the batch's other frames are stored.
func TestWindowBatchRefusalStoresTheOthers(t *testing.T) {
	w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{})
	conv := "c-batch-" + randomSuffix()
	a, b, c := replay.Key{ConversationID: conv, TurnID: "a"}, replay.Key{ConversationID: conv, TurnID: "b"}, replay.Key{ConversationID: conv, TurnID: "c"}
	first := []*appendRequest{batchRequest(t, a, 1, 3), batchRequest(t, c, 1, 3)}
	w.batcher.send(first)
	for _, r := range first {
		require.NoError(t, r.err)
	}
	batch := []*appendRequest{
		batchRequest(t, a, 2, 3),
		batchRequest(t, b, 2, 3), // b has no seq 1: refused
		batchRequest(t, c, 3, 3), // c has no seq 2: refused
	}
	w.batcher.send(batch)
	for i, r := range batch {
		<-r.done
		require.False(t, r.fallback, "request %d", i)
	}
	require.NoError(t, batch[0].err)
	require.Equal(t, replay.Bounds{Lower: 0, Latest: 2}, batch[0].bounds)
	require.ErrorIs(t, batch[1].err, pgx.ErrNoRows)
	require.ErrorIs(t, batch[2].err, pgx.ErrNoRows)
	require.Equal(t, []int64{1, 2}, storedSeqs(t, w, a))
	require.Equal(t, []int64{}, storedSeqs(t, w, b))
	require.Equal(t, []int64{1}, storedSeqs(t, w, c))
}

// TestWindowBatchServerFailureFallsBack: a batch the server fails (here a
// turn id over the table's 256-byte check, past the envelope's own checks
// as a store's limit would be) stores none of its frames and sends every
// request back to run alone.
func TestWindowBatchServerFailureFallsBack(t *testing.T) {
	w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{})
	conv := "c-batch-" + randomSuffix()
	good := replay.Key{ConversationID: conv, TurnID: "good"}
	bad := batchRequest(t, replay.Key{ConversationID: conv, TurnID: "bad"}, 1, 2)
	bad.key.TurnID = strings.Repeat("x", 300)
	batch := []*appendRequest{batchRequest(t, good, 1, 2), bad}
	w.batcher.send(batch)
	for _, r := range batch {
		<-r.done
		require.True(t, r.fallback)
		require.NoError(t, r.err)
	}
	require.Equal(t, []int64{}, storedSeqs(t, w, good))

	// Alone, the good frame is stored.
	_, err := w.Append(t.Context(), good, turnscript.Envelope(good, 1, 2))
	require.NoError(t, err)
	require.Equal(t, []int64{1}, storedSeqs(t, w, good))
}

// TestWindowUnstorableKeyRefused: a turn id PostgreSQL cannot store (a
// NUL) is refused invalid-input before the store, and the Window goes on
// announcing the frames of other turns.
func TestWindowUnstorableKeyRefused(t *testing.T) {
	needDB(t)
	conn := listenConn(t)
	w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{})
	bad := replay.Key{ConversationID: "c-bad\x00" + randomSuffix(), TurnID: "t"}
	_, err := w.Append(t.Context(), bad, turnscript.Envelope(bad, 1, 3))
	require.ErrorIs(t, err, refusal.ErrInvalidInput)
	good := replay.Key{ConversationID: "c-good-" + randomSuffix(), TurnID: "t"}
	_, err = w.Append(t.Context(), good, turnscript.Envelope(good, 1, 3))
	require.NoError(t, err)
	awaitNotification(t, conn, good)
}

// TestWindowPublisherDropsAPayloadTheServerRefuses: one payload the server
// cannot take does not hold back the others of its flush.
func TestWindowPublisherDropsAPayloadTheServerRefuses(t *testing.T) {
	needDB(t)
	conn := listenConn(t)
	w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{})
	good := replay.Key{ConversationID: "c-good-" + randomSuffix(), TurnID: "t"}
	w.pub.mu.Lock() // both in one flush
	w.pub.pending["bad\x00payload"] = struct{}{}
	w.pub.pending[encodeNotification(good)] = struct{}{}
	w.pub.mu.Unlock()
	w.pub.announce(encodeNotification(good))
	awaitNotification(t, conn, good)
	w.pub.mu.Lock()
	defer w.pub.mu.Unlock()
	require.Empty(t, w.pub.pending)
}

// TestWindowQueuedAppendEndsWithItsContext: an Append still queued behind
// four batches that wait on locked turn rows returns its ctx's error and
// stores nothing.
func TestWindowQueuedAppendEndsWithItsContext(t *testing.T) {
	needDB(t)
	pool := newPool(t, poolOpts{maxConns: 8})
	w, err := NewWindow(pool, &WindowOptions{TrimInterval: -1, CatchUpInterval: -1, QueryTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(w.Close)
	conv := "c-queued-" + randomSuffix()
	held := replay.Key{ConversationID: conv, TurnID: "held"}
	_, err = w.Append(t.Context(), held, turnscript.Envelope(held, 1, 9))
	require.NoError(t, err)
	tx, err := pool.Begin(t.Context())
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	_, err = tx.Exec(t.Context(), `SELECT FROM pgstore_replay_turns WHERE conversation_id = $1 FOR UPDATE`, conv)
	require.NoError(t, err)
	// Four appends of one turn: four batches (one frame per turn each),
	// every lane, each waiting for the row.
	var wg sync.WaitGroup
	for range appendLanes {
		wg.Go(func() { _, _ = w.Append(t.Context(), held, turnscript.Envelope(held, 2, 9)) })
	}
	require.Eventually(t, func() bool {
		// Not on tx: a transaction reads the activity view once.
		var n int
		require.NoError(t, pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n))
		return n == appendLanes
	}, 10*time.Second, 5*time.Millisecond)

	queued := replay.Key{ConversationID: conv, TurnID: "queued"}
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err = w.Append(ctx, queued, turnscript.Envelope(queued, 1, 9))
	require.ErrorIs(t, err, context.DeadlineExceeded)

	require.NoError(t, tx.Rollback(t.Context()))
	wg.Wait()
	require.Equal(t, []int64{}, storedSeqs(t, w, queued))
	require.Equal(t, []int64{1, 2}, storedSeqs(t, w, held))
}

// TestWindowRacingWindowsSerializable: two Windows on two pools under
// serializable isolation race on every seq of the same turns: each Append
// is stored or refused with a code (never a raw serialization failure),
// and each seq is stored once.
func TestWindowRacingWindowsSerializable(t *testing.T) {
	a := newTestWindow(t, pgx.Serializable, WindowOptions{})
	b := newTestWindow(t, pgx.Serializable, WindowOptions{})
	conv := "c-race-" + randomSuffix()
	const turns, frames = 8, 20
	var mu sync.Mutex
	won := map[replay.Key]map[int64]int{}
	var wg sync.WaitGroup
	for i := range turns {
		key := replay.Key{ConversationID: conv, TurnID: "t" + strconv.Itoa(i)}
		seqs := map[int64]int{} // the goroutines count here, never reading won while it is filled
		won[key] = seqs
		for _, w := range []*Window{a, b} {
			wg.Go(func() {
				for seq := int64(1); seq <= frames; seq++ {
					_, err := w.Append(t.Context(), key, turnscript.Envelope(key, seq, frames))
					if err != nil {
						assert.NotEmpty(t, refusal.CodeOf(err), "seq %d: %v", seq, err)
						continue
					}
					mu.Lock()
					seqs[seq]++
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	for key, seqs := range won {
		for seq := int64(1); seq <= frames; seq++ {
			require.Equal(t, 1, seqs[seq], "%v seq %d", key, seq)
		}
	}
}

// listenConn is a session listening on the windows' channel, closed when t
// ends.
func listenConn(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), testDSN)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	_, err = conn.Exec(t.Context(), "LISTEN "+notifyChannel)
	require.NoError(t, err)
	return conn
}

// awaitNotification waits up to 10 s for a notification naming key on
// conn (other tests' windows notify on the channel too).
func awaitNotification(t *testing.T, conn *pgx.Conn, key replay.Key) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		n, err := conn.WaitForNotification(ctx)
		require.NoError(t, err, "no notification of %v", key)
		if got, ok := parseNotification(n.Payload); ok && got == key {
			return
		}
	}
}
