package pgstore

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
)

// counter is a pgx tracer that counts the statements sent (each one round
// trip; a statement prepared on first use on a connection costs one more)
// and, by kind, what they were.
type counter struct {
	statements, prepares atomic.Int64
	mu                   sync.Mutex
	kinds                map[string]int
}

func newCounter() *counter { return &counter{kinds: map[string]int{}} }

func (c *counter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.statements.Add(1)
	c.mu.Lock()
	c.kinds[statementKind(d.SQL)]++
	c.mu.Unlock()
	return ctx
}

func (c *counter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *counter) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.prepares.Add(1)
	return ctx
}

func (c *counter) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

func (c *counter) reset() {
	c.statements.Store(0)
	c.prepares.Store(0)
	c.mu.Lock()
	clear(c.kinds)
	c.mu.Unlock()
}

// statementKind names the store's statements for the per-effect breakdown.
func statementKind(sql string) string {
	switch sql {
	case sqlLoadTurn:
		return "load"
	case sqlCompareAndSwap:
		return "cas(claim,complete)"
	case sqlAdmit:
		return "admit"
	case sqlCreateTurn:
		return "start"
	case sqlClaimEffect:
		return "claim+load+try-fence"
	case sqlCompleteAndRelease:
		return "complete+release"
	}
	switch {
	case strings.Contains(sql, "pg_advisory_lock"):
		return "fence-lock"
	case strings.Contains(sql, "pg_advisory_unlock"):
		return "fence-unlock"
	}
	return "other"
}

// runParallel runs effect for indexes [from, to) over workers goroutines,
// as fast as they go, and returns the wall time it took.
func runParallel(workers, from, to int, effect func(w, i int) error) (time.Duration, error) {
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		firstErr atomic.Pointer[error]
	)
	next.Store(int64(from))
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(to) || firstErr.Load() != nil {
					return
				}
				if err := effect(w, int(i)); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	if e := firstErr.Load(); e != nil {
		return 0, *e
	}
	return time.Since(start), nil
}

var benchWorkers = []int{1, 4, 16}

// benchChunk is how many effects each side runs before the other takes
// over: the two are interleaved so that a change of the machine's load
// during the run weighs on both alike.
const benchChunk = 50

// BenchmarkTurnRecovery measures effects per second through
// TurnRecovery.Execute on the local server (claim with its read,
// admission, completion; the turns are started beforehand) against its
// baseline, one bare autocommit INSERT of one row per effect, through a
// pool of the same size, interleaved in chunks of benchChunk effects in
// the same run. It reports both rates, their ratio (ratio-vs-insert), the
// median of the per-chunk ratios (median-chunk-ratio),
// the statements per effect (a pgx tracer) and the round trips per effect
// as a loopback proxy counts them on the wire, over a second, shorter
// pass through the proxy (the timed pass goes direct).
func BenchmarkTurnRecovery(b *testing.B) {
	for _, workers := range benchWorkers {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			c := newCounter()
			ctx := b.Context()
			st := newRecoveryStore(b, poolOpts{maxConns: int32(workers + 2), tracer: c})
			pool := newPool(b, poolOpts{maxConns: int32(workers + 2)})
			_, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_baseline (id text PRIMARY KEY, data bytea)`)
			require.NoError(b, err)
			tag := strconv.Itoa(workers) + "-" + strconv.Itoa(b.N) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36) + "-"
			effects := benchEffects(b, st, workers, "bench-"+tag, b.N)
			insert := func(_, i int) error {
				_, err := pool.Exec(ctx, `INSERT INTO bench_baseline (id, data) VALUES ($1, $2)`, "base-"+tag+strconv.Itoa(i), []byte("ran"))
				return err
			}
			// Warm both pools' connections and statement caches.
			warm := min(b.N, workers*2)
			_, err = runParallel(workers, 0, warm, effects)
			require.NoError(b, err)
			_, err = runParallel(workers, 0, warm, insert)
			require.NoError(b, err)
			c.reset()
			var (
				recoveryTime, insertTime time.Duration
				chunkRatios              []float64
			)
			b.ResetTimer()
			for from := warm; from < b.N; from += benchChunk {
				to := min(from+benchChunk, b.N)
				di, err := runParallel(workers, from, to, insert)
				require.NoError(b, err)
				insertTime += di
				dr, err := runParallel(workers, from, to, effects)
				require.NoError(b, err)
				recoveryTime += dr
				chunkRatios = append(chunkRatios, di.Seconds()/dr.Seconds())
			}
			b.StopTimer()
			if len(chunkRatios) > 0 {
				// The median of the chunks' ratios: a burst of load from
				// elsewhere on the machine spoils a chunk, not the figure.
				slices.Sort(chunkRatios)
				b.ReportMetric(chunkRatios[len(chunkRatios)/2], "median-chunk-ratio")
			}
			n := float64(b.N - warm)
			if n <= 0 {
				return
			}
			recRate, insRate := n/recoveryTime.Seconds(), n/insertTime.Seconds()
			b.ReportMetric(recRate, "effects/s")
			b.ReportMetric(insRate, "inserts/s")
			b.ReportMetric(recRate/insRate, "ratio-vs-insert")
			b.ReportMetric(float64(c.statements.Load())/n, "stmts/effect")
			c.mu.Lock()
			b.Logf("statements by kind over %d effects: %v", int(n), c.kinds)
			c.mu.Unlock()
			b.ReportMetric(wireRoundTrips(b, workers), "roundtrips/effect")
		})
	}
}

// benchEffects starts the turns of n effects (8 per turn) and returns the
// effect function that executes effect i through worker w.
func benchEffects(b *testing.B, st *RecoveryStore, workers int, prefix string, n int) func(w, i int) error {
	ws := newWorkers(st, workers)
	log := newLaunchLog()
	ctx := b.Context()
	const perTurn = 8
	ids := make([]string, perTurn)
	for i := range ids {
		ids[i] = "e" + strconv.Itoa(i)
	}
	// Effect i is effect i/turns of turn i%turns: goroutines running
	// side by side serve different turns, as workers serving different
	// chats do. (Effects of one turn admitted at the same time wait for
	// each other's fence: a fourth round trip, docs/contract.md section
	// 13.4.)
	turns := (n + perTurn - 1) / perTurn
	turnOf := func(i int) recovery.TurnRef {
		return recovery.TurnRef{Conversation: prefix + strconv.Itoa(i%turns), Turn: "t"}
	}
	for i := range turns {
		_, err := ws[0].Start(ctx, "host", turnOf(i), ids)
		require.NoError(b, err)
	}
	return func(w, i int) error {
		_, err := ws[w].Execute(ctx, "host", recovery.EffectRef{Turn: turnOf(i), Effect: ids[i/turns]}, log)
		return err
	}
}

// wireRoundTrips runs 200 effects over workers goroutines through the
// loopback proxy, on connections already open, and returns the round trips
// per effect it counted on the wire.
func wireRoundTrips(b *testing.B, workers int) float64 {
	const n = 200
	proxy := startProxy(b)
	st := newRecoveryStore(b, poolOpts{addr: proxy.Addr(), maxConns: int32(workers + 2)})
	effects := benchEffects(b, st, workers, "wire-"+strconv.Itoa(workers)+"-"+strconv.FormatInt(time.Now().UnixNano(), 36)+"-", 2*n)
	_, err := runParallel(workers, 0, n, effects) // opens and warms the connections
	require.NoError(b, err)
	proxy.ResetRoundTrips()
	_, err = runParallel(workers, n, 2*n, effects)
	require.NoError(b, err)
	return float64(proxy.RoundTrips()) / n
}
