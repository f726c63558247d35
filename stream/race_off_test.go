//go:build !race

package stream_test

// raceEnabled reports whether the tests run with the race detector, which
// multiplies memory use and allocates on its own account.
const raceEnabled = false
