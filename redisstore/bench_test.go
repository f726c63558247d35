package redisstore

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The benchmarks are measured by hand against the server of REDIS_ADDR
// (.ci/redis start), for example
//
//	go test -run '^$' -bench AppendVersusXADD -benchtime 5000x -count 3 .
//	go test -run '^$' -bench DeliveryLatency -benchtime 1000x -count 3 .
//
// which .ci/redisfigures runs on servers of its own, for the README's
// figures.
//
// BenchmarkAppendVersusXADD appends with 1, 4 and 16 concurrent producers
// (a turn each, shorter than DefaultMaxFrames at 5000x, so that no append
// trims), then runs as many bare XADDs of the same bytes on streams
// of their own, and reports both rates and their ratio measured in the
// same run, in fifty alternating rounds: window-appends/s, xadds/s, ratio
// (the window's rate over XADD's; the target is 0.8 or more) and
// median-round-ratio, the median of the rounds' ratios, which a burst of
// the machine's load in one round moves less; and floor-ratio, the rate of
// the least script that refuses a gap (floorScript: no retention, expiry or
// message) over XADD's, in the same rounds, what any script append of this
// design reaches on the machine. BenchmarkAppend is the window alone, for
// its allocations. BenchmarkDeliveryLatency measures append to
// delivery through three Windows to many readers.

var benchProducers = []int{1, 4, 16}

// benchText is a delta's text, the size of a few words of a model.
const benchText = "the quick brown fox jumps over "

// parallel runs n operations over len(next) goroutines, goroutine g doing
// op(g, i) for i = next[g]+1, next[g]+2, …, and returns the elapsed time;
// next[g] is left at the last i.
func parallel(b *testing.B, next []int, n int, op func(g, i int) error) time.Duration {
	b.Helper()
	p := len(next)
	var wg sync.WaitGroup
	start := time.Now()
	for g := range p {
		count := n / p
		if g < n%p {
			count++
		}
		wg.Go(func() {
			for range count {
				next[g]++
				if err := op(g, next[g]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// benchKeys returns p fresh turns.
func benchKeys(p int) []replay.Key {
	keys := make([]replay.Key, p)
	for g := range keys {
		keys[g] = randomKey("t-bench-" + strconv.Itoa(g))
	}
	return keys
}

// appendOps returns the operation that appends frame i of producer g's
// turn through w.
func appendOps(ctx context.Context, w *Window, keys []replay.Key) func(g, i int) error {
	return func(g, i int) error {
		_, err := w.Append(ctx, keys[g], envelope(keys[g], int64(i)+1, benchText, false))
		return err
	}
}

func BenchmarkAppend(b *testing.B) {
	addr := needRedis(b)
	for _, p := range benchProducers {
		b.Run("producers="+strconv.Itoa(p), func(b *testing.B) {
			w, _ := newTestWindow(b, addr, WindowOptions{})
			ctx := b.Context()
			keys := benchKeys(p)
			op := appendOps(ctx, w, keys)
			for g := range keys { // seq 1 is started, not a delta
				if err := op(g, 0); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			elapsed := parallel(b, make([]int, p), b.N, op)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "appends/s")
		})
	}
}

func BenchmarkAppendVersusXADD(b *testing.B) {
	addr := needRedis(b)
	for _, p := range benchProducers {
		b.Run("producers="+strconv.Itoa(p), func(b *testing.B) {
			w, c := newTestWindow(b, addr, WindowOptions{})
			ctx := b.Context()
			keys := benchKeys(p)
			op := appendOps(ctx, w, keys)
			streams := make([]string, p)
			for g := range keys {
				if err := op(g, 0); err != nil {
					b.Fatal(err)
				}
				streams[g] = testPrefix + "bare:" + keys[g].ConversationID
			}
			b.Cleanup(func() { c.Del(context.Background(), streams...) })
			frame, err := replay.EncodeFrame(envelope(keys[0], 2, benchText, false), 0)
			if err != nil {
				b.Fatal(err)
			}
			xadd := func(g, i int) error {
				return c.XAdd(ctx, &redis.XAddArgs{Stream: streams[g], ID: strconv.Itoa(i+1) + "-0",
					Values: []any{"t", frame.Type, "d", frame.Data}}).Err()
			}
			floor := func(g, i int) error {
				n, err := floorScript.Run(ctx, c, []string{streams[g] + ":floor", streams[g] + ":floor-seq"},
					i, frame.Type, frame.Data).Int()
				if err == nil && n != 1 {
					err = errors.New("the floor script refused its append")
				}
				return err
			}
			b.Cleanup(func() {
				for _, s := range streams {
					c.Del(context.Background(), s+":floor", s+":floor-seq")
				}
			})
			// Fifty rounds of each, alternating, so that a change of the
			// machine's load weighs on all alike.
			const rounds = 50
			nextAppend, nextXADD, nextFloor := make([]int, p), make([]int, p), make([]int, p)
			var window, bare, least time.Duration
			ratios := make([]float64, 0, rounds)
			b.ReportAllocs()
			b.ResetTimer()
			for r := range rounds {
				n := b.N / rounds
				if r < b.N%rounds {
					n++
				}
				dw, dx := parallel(b, nextAppend, n, op), parallel(b, nextXADD, n, xadd)
				least += parallel(b, nextFloor, n, floor)
				window, bare = window+dw, bare+dx
				ratios = append(ratios, dx.Seconds()/dw.Seconds())
			}
			b.ReportMetric(float64(b.N)/window.Seconds(), "window-appends/s")
			b.ReportMetric(float64(b.N)/bare.Seconds(), "xadds/s")
			b.ReportMetric(bare.Seconds()/window.Seconds(), "ratio")
			b.ReportMetric(bare.Seconds()/least.Seconds(), "floor-ratio")
			slices.Sort(ratios)
			b.ReportMetric(ratios[len(ratios)/2], "median-round-ratio")
		})
	}
}

// floorScript is the least append script that refuses a gap: KEYS[1] the
// stream, KEYS[2] its latest seq; ARGV[1] seq, ARGV[2] type, ARGV[3] data.
var floorScript = redis.NewScript(`
if (tonumber(redis.call('GET', KEYS[2])) or 0) + 1 ~= tonumber(ARGV[1]) then
	return 0
end
redis.call('XADD', KEYS[1], ARGV[1] .. '-0', 't', ARGV[2], 'd', ARGV[3])
redis.call('SET', KEYS[2], ARGV[1])
return 1
`)

// BenchmarkDeliveryLatency appends frames through one of three Windows,
// each on a client of its own, while 300 or 1,000 readers spread over the
// three follow the turn with the reader loop of package replay; it reports
// the delay from an append's start to each reader's receipt of the frame,
// p50 and p99, over b.N frames, 2 ms apart, after 200 frames that warm the
// process up unmeasured.
func BenchmarkDeliveryLatency(b *testing.B) {
	for _, readers := range []int{300, 1000} {
		b.Run("readers="+strconv.Itoa(readers), func(b *testing.B) { deliveryLatency(b, readers) })
	}
}

// deliveryLatency is BenchmarkDeliveryLatency with readers readers.
func deliveryLatency(b *testing.B, readers int) {
	addr := needRedis(b)
	var w [3]*Window
	for i := range w {
		w[i], _ = newTestWindow(b, addr, WindowOptions{})
	}
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	key := randomKey("t-latency")
	// The first warm frames are delivered but not measured: a process's
	// first thousand readers touch memory the machine maps then, which a
	// server that runs has long mapped.
	const warm = 200
	n := warm + int64(b.N) + 2
	// sent[seq] is the append's start, as time since base: readers load
	// it without a lock, which a thousand of them would contend for.
	base := time.Now()
	sent := make([]atomic.Int64, n+1)
	// The delays are kept in slices made to size before the first frame:
	// a thousand readers growing theirs at the same frame would measure
	// the allocator and the collector, not the delivery.
	var mu sync.Mutex // guards delays
	delays := make([]time.Duration, 0, readers*int(n-warm))
	var wg sync.WaitGroup
	for r := range readers {
		wg.Go(func() {
			win := w[r%3]
			ctx, cancel := context.WithCancel(ctx) // its own, as a request's
			defer cancel()
			mine := make([]time.Duration, 0, n-warm)
			defer func() {
				mu.Lock()
				delays = append(delays, mine...)
				mu.Unlock()
			}()
			for c := int64(0); ; {
				bd, frames, err := win.Read(ctx, key, c, replay.DefaultPageBytes)
				if err != nil {
					b.Error(err)
					return
				}
				now := time.Since(base)
				for _, f := range frames {
					if c = f.Seq; c > warm {
						mine = append(mine, now-time.Duration(sent[f.Seq].Load()))
					}
				}
				if bd.Ended && c == bd.Latest {
					return
				}
				if c < bd.Latest {
					continue
				}
				if _, err := win.Wait(ctx, key, c); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // the readers wait for seq 1
	for seq := int64(1); seq <= n; seq++ {
		if seq == warm+1 {
			b.ResetTimer()
		}
		sent[seq].Store(int64(time.Since(base)))
		var env *chatprotocol.ChatEventEnvelope = envelope(key, seq, benchText, seq == n)
		if _, err := w[0].Append(ctx, key, env); err != nil {
			b.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond)
	}
	wg.Wait()
	b.StopTimer()
	if len(delays) == 0 {
		b.Fatal("no frame delivered")
	}
	slices.Sort(delays)
	b.ReportMetric(float64(delays[len(delays)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(delays[len(delays)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(len(delays))/float64(readers*int(n-warm)), "delivered-share")
}
