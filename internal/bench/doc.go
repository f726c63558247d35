// Package bench compares the sse package's Decoder with the parser of
// github.com/tmaxmax/go-sse, and the replay window on Redis (redisstore)
// with the one on PostgreSQL (pgstore), in a module of its own so that the
// library's go.mod never requires go-sse and no store module requires the
// other. It holds benchmarks and the test that both parsers read the
// benchmark streams alike; see README.md.
package bench
