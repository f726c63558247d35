//go:build race

package recovery_test

// defaultSimSeeds under the race detector, which makes each step about ten
// times slower: the plain run covers the full 10,000 seeds, this run the
// same first seeds with every memory access checked.
const defaultSimSeeds = 1_000
