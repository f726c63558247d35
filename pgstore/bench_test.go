package pgstore

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

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
	}
	switch {
	case strings.Contains(sql, "pg_advisory_lock"):
		return "fence-lock"
	case strings.Contains(sql, "pg_advisory_unlock"):
		return "fence-unlock"
	}
	return "other"
}

// parallel runs effect b.N times over workers goroutines, as fast as they
// go, and reports the rate. (b.Loop is for one goroutine; here b.N is
// shared out.)
func parallel(b *testing.B, workers int, effect func(w, i int) error) {
	var next atomic.Int64
	n := int64(b.N)
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= n {
					return
				}
				if err := effect(w, int(i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "effects/s")
}

var benchWorkers = []int{1, 4, 16}

// BenchmarkTurnRecovery measures effects per second through
// TurnRecovery.Execute on the local server (read, claim, admission,
// completion; the turns are started beforehand), and the statements (round
// trips) per effect, counted by a pgx tracer.
func BenchmarkTurnRecovery(b *testing.B) {
	for _, workers := range benchWorkers {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			c := newCounter()
			st := newRecoveryStore(b, poolOpts{maxConns: int32(workers + 2), tracer: c})
			ws := newWorkers(st, workers)
			log := newLaunchLog()
			ctx := b.Context()
			const perTurn = 8
			prefix := "bench-" + strconv.Itoa(workers) + "-" + strconv.Itoa(b.N) + "-"
			ids := make([]string, perTurn)
			for i := range ids {
				ids[i] = "e" + strconv.Itoa(i)
			}
			turnOf := func(i int) recovery.TurnRef {
				return recovery.TurnRef{Conversation: prefix + strconv.Itoa(i/perTurn), Turn: "t"}
			}
			for i := 0; i < b.N; i += perTurn {
				_, err := ws[0].Start(ctx, "host", turnOf(i), ids)
				require.NoError(b, err)
			}
			// Warm the statement caches of every connection.
			c.reset()
			parallel(b, workers, func(w, i int) error {
				_, err := ws[w].Execute(ctx, "host", recovery.EffectRef{Turn: turnOf(i), Effect: ids[i%perTurn]}, log)
				return err
			})
			b.ReportMetric(float64(c.statements.Load())/float64(b.N), "stmts/effect")
			b.ReportMetric(float64(c.prepares.Load())/float64(b.N), "prepares/effect")
			c.mu.Lock()
			b.Logf("statements by kind over %d effects: %v", b.N, c.kinds)
			c.mu.Unlock()
		})
	}
}

// BenchmarkBaselineInsert is the baseline of BenchmarkTurnRecovery: one
// bare autocommit INSERT per effect, through the same pool, in the same
// run.
func BenchmarkBaselineInsert(b *testing.B) {
	for _, workers := range benchWorkers {
		b.Run("workers="+strconv.Itoa(workers), func(b *testing.B) {
			c := newCounter()
			pool := newPool(b, poolOpts{maxConns: int32(workers + 2), tracer: c})
			ctx := b.Context()
			_, err := pool.Exec(ctx, `CREATE TABLE IF NOT EXISTS bench_baseline (id text PRIMARY KEY, data bytea)`)
			require.NoError(b, err)
			prefix := "base-" + strconv.Itoa(workers) + "-" + strconv.Itoa(b.N) + "-"
			c.reset()
			parallel(b, workers, func(_, i int) error {
				_, err := pool.Exec(ctx, `INSERT INTO bench_baseline (id, data) VALUES ($1, $2)`, prefix+strconv.Itoa(i), []byte("ran"))
				return err
			})
			b.ReportMetric(float64(c.statements.Load())/float64(b.N), "stmts/effect")
		})
	}
}
