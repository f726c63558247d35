package pgstore

import (
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/pgstore/internal/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// batchRequest is the request Append queues for seq of key's scripted
// turn of n frames.
func batchRequest(t *testing.T, w *Window, key replay.Key, seq, n int64) *appendRequest {
	t.Helper()
	env := turnscript.Envelope(key, seq, n)
	f, err := replay.EncodeFrame(env, 0)
	require.NoError(t, err)
	args := append(w.appendArgs(key, f, replay.EndsTurn(env), false), encodeNotification(key))
	return &appendRequest{args: args, bytes: len(f.Data), done: make(chan struct{})}
}

// storedSeqs reads back the seqs stored for key.
func storedSeqs(t *testing.T, w *Window, key replay.Key) []uint64 {
	t.Helper()
	_, frames, err := w.Read(t.Context(), key, 0)
	require.NoError(t, err)
	seqs := []uint64{}
	for _, f := range frames {
		seqs = append(seqs, f.Seq)
	}
	return seqs
}

// TestWindowBatchRefusalCommitsTheOthers: a statement of a batch that the
// seq rule refuses answers pgx.ErrNoRows on its own; the batch's other
// frames, before and after it, are stored.
func TestWindowBatchRefusalCommitsTheOthers(t *testing.T) {
	w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{})
	conv := "c-batch-" + randomSuffix()
	a, b, c := replay.Key{ConversationID: conv, TurnID: "a"}, replay.Key{ConversationID: conv, TurnID: "b"}, replay.Key{ConversationID: conv, TurnID: "c"}
	batch := []*appendRequest{
		batchRequest(t, w, a, 1, 3),
		batchRequest(t, w, b, 2, 3), // b has no seq 1: refused
		batchRequest(t, w, a, 2, 3), // sees seq 1 of the same batch
		batchRequest(t, w, c, 1, 3),
	}
	w.batcher.send(batch)
	for i, r := range batch {
		<-r.done
		require.False(t, r.fallback, "request %d", i)
	}
	require.NoError(t, batch[0].err)
	require.ErrorIs(t, batch[1].err, pgx.ErrNoRows)
	require.NoError(t, batch[2].err)
	require.NoError(t, batch[3].err)
	require.Equal(t, replay.Bounds{Lower: 0, Latest: 2}, batch[2].bounds)
	require.Equal(t, []uint64{1, 2}, storedSeqs(t, w, a))
	require.Equal(t, []uint64{}, storedSeqs(t, w, b))
	require.Equal(t, []uint64{1}, storedSeqs(t, w, c))
}

// TestWindowBatchServerFailureFallsBack: a batch the server fails (here a
// turn id over the table's 256-byte check) stores nothing of any of its
// frames and sends every request back to run alone.
func TestWindowBatchServerFailureFallsBack(t *testing.T) {
	w := newTestWindow(t, pgx.ReadCommitted, WindowOptions{})
	conv := "c-batch-" + randomSuffix()
	good := replay.Key{ConversationID: conv, TurnID: "good"}
	bad := batchRequest(t, w, replay.Key{ConversationID: conv, TurnID: "bad"}, 1, 2)
	bad.args[1] = strings.Repeat("x", 300) // past the envelope's checks, as a store's own limit would be
	batch := []*appendRequest{batchRequest(t, w, good, 1, 2), bad}
	w.batcher.send(batch)
	for _, r := range batch {
		<-r.done
		require.True(t, r.fallback)
		require.NoError(t, r.err)
	}
	require.Equal(t, []uint64{}, storedSeqs(t, w, good))

	// Alone, the good frame is stored and the bad one fails by itself.
	_, err := w.Append(t.Context(), good, turnscript.Envelope(good, 1, 2))
	require.NoError(t, err)
	require.Equal(t, []uint64{1}, storedSeqs(t, w, good))
}

// TestWindowBatchConcurrentProducers: 16 producers of turns of their own
// and 4 producers racing on one shared turn, all through the batcher: every
// turn of its own holds every frame once, in order; the shared turn holds
// seqs 1..n with no gap, each stored by exactly one producer.
func TestWindowBatchConcurrentProducers(t *testing.T) {
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
	want := make([]uint64, frames)
	for i := range want {
		want[i] = uint64(i + 1)
	}
	for p := range producers {
		require.Equal(t, want, storedSeqs(t, w, replay.Key{ConversationID: conv, TurnID: "own-" + strconv.Itoa(p)}))
	}
	require.Equal(t, want, storedSeqs(t, w, shared))
	for seq := int64(1); seq <= frames; seq++ {
		require.Equal(t, 1, won[seq], "seq %d", seq)
	}
}
