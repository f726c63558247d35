// Package teststream is the module's test support for SSE streams: it reads
// the event frames of a stream, such as the captured ones in
// testdata/streams, without its comments and heartbeats ([EventFrames]), and
// generates synthetic legacy0 streams of any size for measuring `chatwire
// decode` ([Generate]; the command's benchmarks read one from memory,
// genstream writes one to stdout). Nothing here is part of the module's
// API; only tests import it.
package teststream
