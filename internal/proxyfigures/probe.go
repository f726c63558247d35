package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// pace is the time between two frames of a live turn.
const pace = 50 * time.Millisecond

// liveFigures is what the latency probe measured for one row.
type liveFigures struct {
	frames           int
	added50, added99 time.Duration // proxied arrival minus direct arrival, per frame
	direct50         time.Duration // append to direct arrival
	direct99         time.Duration
	proxied99        time.Duration // append to proxied arrival
	encoding         string
	end              string
}

// live reports whether every frame but a few came through before the next
// was appended.
func (f liveFigures) live() bool { return f.proxied99 < pace }

// probeLatency follows one live turn of frames+2 frames (started, the
// deltas, completed), one every pace, directly and through the proxy at
// once, both connected before the first delta is appended.
func probeLatency(ctx context.Context, up *upstream, proxyAddr string, n, frames int) (liveFigures, error) {
	key := turnKey("live", n)
	if err := up.appendFrame(ctx, key, 1, false); err != nil {
		return liveFigures{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(frames)*pace+30*time.Second)
	defer cancel()
	type result struct {
		res *response
		err error
	}
	var firsts [2]chan arrival
	var results [2]chan result
	for i, addr := range []string{up.addr, proxyAddr} {
		firsts[i], results[i] = make(chan arrival, frames+2), make(chan result, 1)
		go func() {
			res, err := readStream(ctx, newClient(), "http://"+addr+path("main", key), "", firsts[i])
			results[i] <- result{res, err}
		}()
	}
	for i := range firsts {
		select {
		case <-firsts[i]:
		case r := <-results[i]:
			return liveFigures{}, fmt.Errorf("reader %d ended before the first frame: %+v %v", i, r.res, r.err)
		case <-time.After(5 * time.Second):
			// a proxy that holds the body: the probe goes on and measures it
		}
	}
	if err := up.appendFrames(ctx, key, 2, int64(frames)+2, pace, true); err != nil {
		return liveFigures{}, err
	}
	var res [2]*response
	for i := range results {
		r := <-results[i]
		if r.err != nil {
			return liveFigures{}, r.err
		}
		res[i] = r.res
	}
	direct, proxied := byseq(res[0].frames), byseq(res[1].frames)
	up.mu.Lock()
	appended := up.appended[key]
	up.mu.Unlock()
	f := liveFigures{frames: frames, encoding: res[1].encoding, end: res[1].end}
	var added, d, p []time.Duration
	for seq := int64(2); seq <= int64(frames)+2; seq++ {
		da, ok1 := direct[seq]
		pa, ok2 := proxied[seq]
		if !ok1 || !ok2 {
			return f, fmt.Errorf("seq %d: direct %v, proxied %v (of %d and %d frames)", seq, ok1, ok2, len(direct), len(proxied))
		}
		added = append(added, pa.Sub(da))
		d = append(d, da.Sub(appended[seq]))
		p = append(p, pa.Sub(appended[seq]))
	}
	f.added50, f.added99 = quantile(added, 50), quantile(added, 99)
	f.direct50, f.direct99 = quantile(d, 50), quantile(d, 99)
	f.proxied99 = quantile(p, 99)
	return f, nil
}

// byseq indexes arrivals by seq.
func byseq(as []arrival) map[int64]time.Time {
	m := make(map[int64]time.Time, len(as))
	for _, a := range as {
		m[a.seq] = a.at
	}
	return m
}

// quantile returns the q-th percentile of ds (nearest rank).
func quantile(ds []time.Duration, q int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := (q*len(s) + 99) / 100
	return s[max(rank, 1)-1]
}

// probeAbort serves a turn of five frames that has not ended from a
// Handler of its own, reads it through addr until the five arrived (or 3s
// passed), then closes the Handler, as a graceful shutdown does, and
// returns how the body ended for the reader.
func probeAbort(ctx context.Context, up *upstream, addr string, n int) (string, error) {
	name := "abort-" + strconv.Itoa(n)
	h, err := up.handler(name, 0)
	if err != nil {
		return "", err
	}
	key := turnKey(name, n)
	if err := up.appendFrames(ctx, key, 1, 5, 0, false); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	each := make(chan arrival, 8)
	done := make(chan *response, 1)
	go func() {
		res, err := readStream(ctx, newClient(), "http://"+addr+path(name, key), "", each)
		if err != nil {
			res = &response{end: "error: " + err.Error()}
		}
		done <- res
	}()
	wait := time.After(3 * time.Second)
	for got := 0; got < 5; {
		select {
		case <-each:
			got++
		case <-wait:
			got = 5
		case res := <-done:
			return "", fmt.Errorf("the body ended before the abort: %s", res.end)
		}
	}
	h.Close()
	select {
	case res := <-done:
		return fmt.Sprintf("%s, after %d frames", res.end, len(res.frames)), nil
	case <-ctx.Done():
		return "", errors.New("the body did not end within 15s of the abort")
	}
}

// probeReplay serves a turn of frames frames that has not ended and reads
// it through addr from the start: it reports when the last arrived,
// or, when it did not within 3s, appends the turn's end and reports when
// it arrived after that (a proxy that holds the body until it ends).
func probeReplay(ctx context.Context, up *upstream, addr string, n, frames int) (string, error) {
	key := turnKey("replay", n)
	if err := up.appendFrames(ctx, key, 1, int64(frames), 0, false); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	each := make(chan arrival, frames+1)
	done := make(chan *response, 1)
	start := time.Now()
	go func() {
		res, err := readStream(ctx, newClient(), "http://"+addr+path("main", key), "", each)
		if err != nil {
			res = &response{end: "error: " + err.Error()}
		}
		done <- res
	}()
	wait := time.After(3 * time.Second)
	for got := 0; ; {
		select {
		case <-each:
			if got++; got == frames {
				return fmt.Sprintf("at once: the %d frames in %s", frames, ms(time.Since(start))), nil
			}
		case <-wait:
			held := got
			ended := time.Now()
			if err := up.appendFrame(ctx, key, int64(frames)+1, true); err != nil {
				return "", err
			}
			for got < frames {
				select {
				case <-each:
					got++
				case <-ctx.Done():
					return fmt.Sprintf("held: %d of %d frames in 3s, and no more within 12s after the end", got, frames), nil
				}
			}
			return fmt.Sprintf("held: %d of the %d frames in 3s, all %s after the turn's end", held, frames, ms(time.Since(ended))), nil
		case res := <-done:
			return "", fmt.Errorf("the body ended after %d frames: %s", len(res.frames), res.end)
		}
	}
}

// probeResume asks through addr for the ended live turn of row n after
// seq latest-5 (want the 5 frames after it and a clean end) and after
// latest (want 204).
func probeResume(ctx context.Context, up *upstream, addr string, n int, latest int64) (string, error) {
	key := turnKey("live", n)
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := readStream(ctx, newClient(), "http://"+addr+path("main", key), strconv.FormatInt(latest-5, 10), nil)
	if err != nil {
		return "", err
	}
	if res.status != 200 || len(res.frames) != 5 || res.frames[0].seq != latest-4 || res.end != "clean" {
		return fmt.Sprintf("resume: status %d, %d frames, end %q", res.status, len(res.frames), res.end), nil
	}
	res, err = readStream(ctx, newClient(), "http://"+addr+path("main", key), strconv.FormatInt(latest, 10), nil)
	if err != nil {
		return "", err
	}
	if res.status != 204 {
		return fmt.Sprintf("resume ok; after the end: status %d", res.status), nil
	}
	return "ok", nil
}

// probeIdle serves a turn of one frame that never goes on, from a Handler
// that sends no heartbeat, reads it through addr, and returns how long
// the body lasted (up to limit).
func probeIdle(ctx context.Context, up *upstream, addr string, n int, limit time.Duration) (string, error) {
	name := "idle-" + strconv.Itoa(n)
	if _, err := up.handler(name, -1); err != nil {
		return "", err
	}
	key := turnKey(name, n)
	if err := up.appendFrame(ctx, key, 1, false); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	start := time.Now()
	res, err := readStream(ctx, newClient(), "http://"+addr+path(name, key), "", nil)
	if err != nil {
		return "", err
	}
	if res.end == "" {
		return fmt.Sprintf("none within %s", limit), nil
	}
	return fmt.Sprintf("%.1f s (%s)", time.Since(start).Seconds(), res.end), nil
}

// ms formats d in milliseconds with two decimals below 10ms.
func ms(d time.Duration) string {
	f := float64(d) / float64(time.Millisecond)
	if f < 10 {
		return strconv.FormatFloat(f, 'f', 2, 64) + " ms"
	}
	return strconv.FormatFloat(f, 'f', 0, 64) + " ms"
}
