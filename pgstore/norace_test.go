//go:build !race

package pgstore

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
