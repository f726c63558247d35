// Package bench compares the sse package's Decoder with the parser of
// github.com/tmaxmax/go-sse, in a module of its own so that the library's
// go.mod never requires go-sse. It holds benchmarks and the test that both
// parsers read the benchmark streams alike; see README.md.
package bench
