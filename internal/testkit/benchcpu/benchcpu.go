// Package benchcpu reports, beside a benchmark's wall-clock figures, the
// CPU time the process spent per operation (cpu-ns/op) and the throughput
// that gives (MB/cpu-s). On a machine shared with other work the wall
// clock measures the load as much as the code; the CPU time of the
// process, user and system on all its threads (the garbage collector's
// included), much less so. Nothing here is part of the module's API.
package benchcpu

import (
	"testing"
	"time"
)

// A Meter measures the CPU time from Start to Report.
type Meter struct {
	start time.Duration
	ok    bool
}

// Start starts a measure; call it just before the benchmark's loop.
func Start() Meter {
	start, ok := processCPU()
	return Meter{start: start, ok: ok}
}

// Report ends the measure of b, just after its loop, and reports
// cpu-ns/op, and MB/cpu-s when each operation reads bytes bytes (0: not
// reported). It reports nothing where the CPU time is not measured.
func (m Meter) Report(b *testing.B, bytes int) {
	end, ok := processCPU()
	if !m.ok || !ok || b.N == 0 || end <= m.start {
		return
	}
	cpu := end - m.start
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	if bytes > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/cpu.Seconds()/1e6, "MB/cpu-s")
	}
}
