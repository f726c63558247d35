//go:build !race

package recovery_test

// defaultSimSeeds is the number of simulation seeds of a plain go test.
const defaultSimSeeds = 10_000
