//go:build !race

package stream_test

// raceEnabled reports whether the tests run with the race detector, which
// multiplies memory use.
const raceEnabled = false
