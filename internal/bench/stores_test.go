package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/pgstore"
	"github.com/Papercusp/chat-protocol-go/redisstore"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// BenchmarkStoreAppend compares the append throughput of the replay window
// on Redis (redisstore.Window) with the one on PostgreSQL (pgstore.Window)
// at 1, 4 and 16 concurrent producers, each appending delta frames to a
// turn of its own, in forty alternating rounds of one run so that the
// machine's load weighs on both alike, after an untimed first frame of
// each turn. It reports redis-appends/s, pg-appends/s, ratio (Redis's rate
// over PostgreSQL's) and median-round-ratio (the median of the rounds'). It needs both
// servers: REDIS_ADDR (.ci/redis start) and CHATPROTOCOL_PG_DSN (.ci/postgres
// start), whose server gets a database of the run's own, dropped at its end;
// without them it skips.
func BenchmarkStoreAppend(b *testing.B) {
	addr, admin := os.Getenv("REDIS_ADDR"), os.Getenv("CHATPROTOCOL_PG_DSN")
	if addr == "" || admin == "" {
		b.Skip("SKIPPED: set REDIS_ADDR and CHATPROTOCOL_PG_DSN (.ci/redis start, .ci/postgres start)")
	}
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: addr})
	b.Cleanup(func() { _ = client.Close() })
	rw, err := redisstore.NewWindow(client, &redisstore.WindowOptions{Prefix: "chatprotocol-bench:" + suffix() + ":"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rw.Close)
	pool := freshDatabase(b, admin)
	if err := pgstore.Migrate(ctx, pool); err != nil {
		b.Fatal(err)
	}
	pw, err := pgstore.NewWindow(pool, &pgstore.WindowOptions{TrimInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pw.Close)

	for _, p := range []int{1, 4, 16} {
		b.Run("producers="+strconv.Itoa(p), func(b *testing.B) {
			keys := make([]replay.Key, p)
			for g := range keys {
				keys[g] = replay.Key{ConversationID: "c-" + suffix(), TurnID: "t-" + strconv.Itoa(g)}
			}
			const rounds = 40
			next := map[replay.Window][]int64{rw: make([]int64, p), pw: make([]int64, p)}
			elapsed := map[replay.Window]time.Duration{}
			ratios := make([]float64, 0, rounds)
			for _, w := range []replay.Window{rw, pw} { // seq 1 of each turn, untimed: the connections and scripts ready
				appendAll(ctx, b, w, keys, next[w], p)
			}
			b.ResetTimer()
			for r := range rounds {
				n := b.N / rounds
				if r < b.N%rounds {
					n++
				}
				dr, dp := appendAll(ctx, b, rw, keys, next[rw], n), appendAll(ctx, b, pw, keys, next[pw], n)
				elapsed[rw], elapsed[pw] = elapsed[rw]+dr, elapsed[pw]+dp
				ratios = append(ratios, dp.Seconds()/dr.Seconds())
			}
			b.ReportMetric(float64(b.N)/elapsed[rw].Seconds(), "redis-appends/s")
			b.ReportMetric(float64(b.N)/elapsed[pw].Seconds(), "pg-appends/s")
			b.ReportMetric(elapsed[pw].Seconds()/elapsed[rw].Seconds(), "ratio")
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "median-round-ratio")
		})
	}
}

// appendAll appends n frames to w over len(keys) goroutines, goroutine g
// to keys[g] after its seq next[g], and returns the elapsed time.
func appendAll(ctx context.Context, b *testing.B, w replay.Window, keys []replay.Key, next []int64, n int) time.Duration {
	b.Helper()
	var wg sync.WaitGroup
	start := time.Now()
	for g := range keys {
		count := n / len(keys)
		if g < n%len(keys) {
			count++
		}
		wg.Go(func() {
			for range count {
				next[g]++
				if _, err := w.Append(ctx, keys[g], frame(keys[g], next[g])); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// frame is key's frame at seq: started at 1, a delta of a few words after.
func frame(key replay.Key, seq int64) *chatprotocol.ChatEventEnvelope {
	var ev chatprotocol.Event = &chatprotocol.DeltaEvent{Text: "the quick brown fox jumps over "}
	if seq == 1 {
		ev = &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleStarted}
	}
	return &chatprotocol.ChatEventEnvelope{ConversationID: key.ConversationID, TurnID: key.TurnID,
		EventID: key.TurnID + ":" + strconv.FormatInt(seq, 10), Seq: seq, Event: ev}
}

// freshDatabase creates a database of the run's own on the server of the
// DSN admin, dropped when b ends, and returns a pool of it.
func freshDatabase(b *testing.B, admin string) *pgxpool.Pool {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		b.Fatal(err)
	}
	name := "store_bench_" + suffix()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		b.Fatal(err)
	}
	u, err := url.Parse(admin)
	if err != nil {
		b.Fatal(err)
	}
	u.Path = "/" + name
	cfg, err := pgxpool.ParseConfig(u.String())
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		pool.Close()
		if _, err := conn.Exec(context.Background(), "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			b.Error(err)
		}
		_ = conn.Close(context.Background())
	})
	return pool
}

// suffix is a random name part: runs sharing a server never meet.
func suffix() string {
	var x [6]byte
	_, _ = rand.Read(x[:])
	return hex.EncodeToString(x[:])
}
