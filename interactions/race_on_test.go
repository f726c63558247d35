//go:build race

package interactions_test

// raceEnabled reports whether the tests run under the race detector, which
// makes the simulation about ten times slower.
const raceEnabled = true
