package main

import (
	"sync/atomic"
	"time"
)

// bucket is the histogram's resolution.
const bucket = 50 * time.Microsecond

// buckets covers latencies up to 2 s; the last bucket holds the longer ones.
const buckets = int(2*time.Second/bucket) + 1

// histogram counts latencies in buckets of 50 µs; safe for concurrent use.
type histogram struct {
	counts [buckets]atomic.Int64
	max    atomic.Int64
}

func (h *histogram) record(d time.Duration) {
	i := min(max(0, int(d/bucket)), buckets-1)
	h.counts[i].Add(1)
	for m := h.max.Load(); int64(d) > m && !h.max.CompareAndSwap(m, int64(d)); m = h.max.Load() {
	}
}

func (h *histogram) reset() {
	for i := range h.counts {
		h.counts[i].Store(0)
	}
	h.max.Store(0)
}

// total is the number of latencies recorded.
func (h *histogram) total() int64 {
	var n int64
	for i := range h.counts {
		n += h.counts[i].Load()
	}
	return n
}

// quantile is the upper edge of the bucket holding quantile q (0 to 1).
func (h *histogram) quantile(q float64) time.Duration {
	n := h.total()
	if n == 0 {
		return 0
	}
	rank := int64(q * float64(n))
	var seen int64
	for i := range h.counts {
		if seen += h.counts[i].Load(); seen > rank {
			return time.Duration(i+1) * bucket
		}
	}
	return time.Duration(h.max.Load())
}
