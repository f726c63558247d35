package pgstore

import (
	"bufio"
	"context"
	"flag"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/pgstore/internal/turnscript"
	"github.com/Papercusp/chat-protocol-go/replay"
)

var (
	flagLatency          = flag.Bool("pgstore.latency", false, "run BenchmarkWindowDeliveryLatency (about 10 s an iteration)")
	flagLatencyFollowers = flag.Int("pgstore.latency.followers", 1000, "followers of BenchmarkWindowDeliveryLatency, spread over three servers")
	flagLatencyFrames    = flag.Int("pgstore.latency.frames", 200, "frames of BenchmarkWindowDeliveryLatency's turn")
	flagLatencyPace      = flag.Duration("pgstore.latency.pace", 20*time.Millisecond, "time between two appends of BenchmarkWindowDeliveryLatency")
	flagLatencyOnRequest = flag.Bool("pgstore.latency.wait-on-request", false, "BenchmarkWindowDeliveryLatency's servers keep each stream on its request goroutine (stream.HandlerOptions.WaitOnRequest) instead of parking it")
)

// BenchmarkWindowDeliveryLatency measures cross-instance append-to-delivery
// latency: a producer appends through a Window of its own, and followers
// spread over three streamserver processes (each a Window and the stream
// handler, on the same database) receive each frame; the latency of a frame
// to a follower is the time from the start of its Append to the moment
// the follower has read it. It reports p50, p99 and the maximum over every
// (frame, follower) pair as the metrics p50-ms, p99-ms and max-ms (the
// bound: p99 at most 100 ms). Every follower must receive every
// frame. It runs with -pgstore.latency only (about 10 s an iteration):
//
//	go test -run '^$' -bench '^BenchmarkWindowDeliveryLatency$' -benchtime 1x . -args -pgstore.latency
func BenchmarkWindowDeliveryLatency(b *testing.B) {
	if !*flagLatency {
		b.Skip("SKIPPED: run with -args -pgstore.latency (about 10 s an iteration)")
	}
	needDB(b)
	for b.Loop() {
		lat := deliveryLatency(b)
		p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		b.ReportMetric(ms(p(0.5)), "p50-ms")
		b.ReportMetric(ms(p(0.99)), "p99-ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "max-ms")
	}
}

// deliveryLatency runs one measurement of BenchmarkWindowDeliveryLatency and
// returns the sorted latencies of every (frame, follower) pair.
func deliveryLatency(t testing.TB) []time.Duration {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	bin := buildStreamServer(t)
	var servers [3]*serverProc
	for i := range servers {
		var extra []string
		if *flagLatencyOnRequest {
			extra = []string{"-wait-on-request"}
		}
		servers[i] = startServer(t, bin, "127.0.0.1:0", testDSN, "", extra)
	}
	w := newTestWindow(t, "", WindowOptions{})
	key := replay.Key{ConversationID: "c-latency-" + randomSuffix(), TurnID: "t"}
	followers, n := *flagLatencyFollowers, int64(*flagLatencyFrames)

	received := make([][]int64, followers) // [follower][seq-1] unix nanoseconds
	var ready, done sync.WaitGroup
	errs := make(chan error, followers)
	transport := &http.Transport{MaxIdleConnsPerHost: followers, DisableCompression: true}
	client := &http.Client{Transport: transport}
	defer transport.CloseIdleConnections()
	for i := range followers {
		ready.Add(1)
		done.Go(func() {
			received[i] = make([]int64, n)
			url := servers[i%len(servers)].base + "/conversations/" + key.ConversationID + "/turns/" + key.TurnID + "/events"
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := client.Do(req)
			if err != nil {
				ready.Done()
				errs <- err
				return
			}
			defer resp.Body.Close()
			sc := bufio.NewScanner(resp.Body)
			first := true
			var id int64
			for sc.Scan() {
				line := sc.Text()
				switch {
				case line == "":
					if first {
						first = false
						ready.Done() // the opening heartbeat: the stream is live
					}
					if id > 0 && id <= n {
						received[i][id-1] = time.Now().UnixNano()
					}
					id = 0
				case strings.HasPrefix(line, "id: "):
					id, _ = strconv.ParseInt(line[4:], 10, 64)
				}
			}
			if first {
				ready.Done()
			}
		})
	}
	ready.Wait()
	require.Empty(t, errs, "every follower connected")

	sent := make([]int64, n)
	appendTook := make([]time.Duration, 0, n)
	for seq := int64(1); seq <= n; seq++ {
		start := time.Now()
		sent[seq-1] = start.UnixNano()
		_, err := w.Append(ctx, key, turnscript.Envelope(key, seq, n))
		require.NoError(t, err)
		appendTook = append(appendTook, time.Since(start))
		time.Sleep(*flagLatencyPace)
	}
	slices.Sort(appendTook)
	done.Wait()

	lat := make([]time.Duration, 0, int64(followers)*n)
	for i := range followers {
		for s := range n {
			require.NotZero(t, received[i][s], "follower %d received frame %d", i, s+1)
			lat = append(lat, time.Duration(received[i][s]-sent[s]))
		}
	}
	slices.Sort(lat)
	p := func(q float64) time.Duration { return lat[int(q*float64(len(lat)-1))] }
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	t.Logf("append-to-delivery latency (wait on request %v) over %d followers on 3 instances, %d frames every %s: p50 %s, p90 %s, p99 %s, max %s (%d deliveries); the appends themselves: p50 %s, p99 %s",
		*flagLatencyOnRequest, followers, n, *flagLatencyPace, r(p(0.5)), r(p(0.9)), r(p(0.99)), r(lat[len(lat)-1]), len(lat),
		r(appendTook[len(appendTook)/2]), r(appendTook[len(appendTook)*99/100]))
	return lat
}
