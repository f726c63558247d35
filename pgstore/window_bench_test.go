package pgstore

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/pgstore/internal/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// bareInsert is the baseline of BenchmarkWindowAppend: the same frame row
// inserted into a table of the same shape and key (no turn row, no
// notification, no check), one autocommit statement.
const bareInsert = `INSERT INTO pgstore_replay_bench_bare (conversation_id, turn_id, seq, type, data) VALUES ($1, $2, $3, $4, $5)`

// BenchmarkWindowAppend compares Window.Append with a bare INSERT of the
// same rows, at 1, 4 and 16 concurrent producers, each appending to a turn
// of its own. Each iteration has every producer append one frame, then
// insert one row: the two run alternately, under the same load, and the
// benchmark reports appends/s, inserts/s and their ratio
// (append/insert, the target is at least 0.5), and the median of the
// ratios of chunks of benchChunk rounds (median-chunk-ratio).
func BenchmarkWindowAppend(b *testing.B) {
	pool := newPool(b, poolOpts{maxConns: 16})
	ctx := b.Context()
	_, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS pgstore_replay_bench_bare (LIKE pgstore_replay_frames INCLUDING ALL)`)
	require.NoError(b, err)
	w, err := NewWindow(pool, &WindowOptions{TrimInterval: -1})
	require.NoError(b, err)
	b.Cleanup(w.Close)

	for _, producers := range []int{1, 4, 16} {
		b.Run("producers="+strconv.Itoa(producers), func(b *testing.B) {
			conv := "c-bench-" + randomSuffix()
			keys := make([]replay.Key, producers)
			for i := range keys {
				keys[i] = replay.Key{ConversationID: conv, TurnID: "t-" + strconv.Itoa(i)}
			}
			const frames = 1 << 40 // the turns never end
			var appendTime, insertTime time.Duration
			round := func(op func(p int, seq int64) error, seq int64) time.Duration {
				var wg sync.WaitGroup
				errs := make([]error, producers)
				start := time.Now()
				for p := range producers {
					wg.Go(func() { errs[p] = op(p, seq) })
				}
				wg.Wait()
				d := time.Since(start)
				for _, err := range errs {
					require.NoError(b, err)
				}
				return d
			}
			appendOne := func(p int, seq int64) error {
				_, err := w.Append(ctx, keys[p], turnscript.Envelope(keys[p], seq, frames))
				return err
			}
			insertOne := func(p int, seq int64) error {
				env := turnscript.Envelope(keys[p], seq, frames)
				data, err := env.AppendJSON(nil)
				if err != nil {
					return err
				}
				_, err = pool.Exec(ctx, bareInsert, keys[p].ConversationID, keys[p].TurnID, seq, env.Event.EventType(), data)
				return err
			}
			b.ReportAllocs()
			seq := int64(0)
			var chunkAppend, chunkInsert time.Duration
			var chunkRatios []float64
			for b.Loop() {
				seq++
				da, di := round(appendOne, seq), round(insertOne, seq)
				appendTime, insertTime = appendTime+da, insertTime+di
				chunkAppend, chunkInsert = chunkAppend+da, chunkInsert+di
				if seq%benchChunk == 0 {
					chunkRatios = append(chunkRatios, chunkInsert.Seconds()/chunkAppend.Seconds())
					chunkAppend, chunkInsert = 0, 0
				}
			}
			if len(chunkRatios) > 0 {
				// A burst of load from elsewhere on the machine spoils a
				// chunk, not the median.
				slices.Sort(chunkRatios)
				b.ReportMetric(chunkRatios[len(chunkRatios)/2], "median-chunk-ratio")
			}
			ops := float64(seq * int64(producers))
			appends, inserts := ops/appendTime.Seconds(), ops/insertTime.Seconds()
			b.ReportMetric(appends, "appends/s")
			b.ReportMetric(inserts, "inserts/s")
			b.ReportMetric(appends/inserts, "append/insert")
		})
	}
}
