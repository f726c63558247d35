//go:build unix

package benchcpu

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used so far, user and
// system, on all its threads.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
