// Package realclients holds tests, in a module of its own so that the
// library's go.mod requires none of their dependencies: three Go SSE
// clients nobody here wrote, github.com/tmaxmax/go-sse,
// github.com/r3labs/sse/v2 and github.com/launchdarkly/eventsource, follow a live turn from the stream package's Handler through a proxy that
// cuts their connections at random byte offsets, and across a graceful
// shutdown of the instance serving them (docs/contract.md section 14); and
// a real compression middleware, github.com/klauspost/compress/gzhttp with
// its default options, sits in front of the Handler while clients decode
// gzip and zstd. The servers, the proxy and the checks come from
// internal/testkit/realclient; the Node clients' tests are in the stream
// package.
package realclients
