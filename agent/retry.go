package agent

import (
	"time"
)

// Retry bounds the retries of a failed model step (docs/contract.md
// section 19.5): a step is retried only when its failure is transient
// ([ingest.Transient]) and nothing of it reached the stream, at most
// Attempts times in a row, after Base, then twice as long each time, at
// most Max. A tool call is never retried. Zero fields mean the defaults
// ([DefaultRetry]); Attempts below zero means no retry.
type Retry struct {
	Attempts int
	Base     time.Duration
	Max      time.Duration
}

// DefaultRetry is the retry policy a zero [Retry] means: two retries,
// after 500 ms and 1 s, at most 8 s apart.
var DefaultRetry = Retry{Attempts: 2, Base: 500 * time.Millisecond, Max: 8 * time.Second}

// attempts is the number of retries allowed in a row.
func (r Retry) attempts() int {
	switch {
	case r.Attempts < 0:
		return 0
	case r.Attempts == 0:
		return DefaultRetry.Attempts
	}
	return r.Attempts
}

// delay is the wait before the n-th retry in a row (n from 1).
func (r Retry) delay(n int) time.Duration {
	base, most := r.Base, r.Max
	if base <= 0 {
		base = DefaultRetry.Base
	}
	if most <= 0 {
		most = DefaultRetry.Max
	}
	d := base
	for i := 1; i < n && d < most; i++ {
		d *= 2
	}
	return min(d, most)
}
