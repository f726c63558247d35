// Package relay is the serving core the front-end bridges share
// (docs/contract.md section 18): it serves one turn of a replay window as
// another protocol's event stream, transcoding every frame once for all the
// streams of a turn, with the stream handler's rules of section 14.2
// (pages, bounded window reads, heartbeats as SSE comments, write deadlines,
// an abort for a stream that ends before its turn).
//
// A bridge supplies a Codec per turn: a state machine that turns the turn's
// frames, in seq order from the first, into the bytes of its protocol. A
// Cache holds one Codec per turn and the output of its most recent frames,
// so that N streams of one turn cost one transcoding per frame; a stream
// that falls behind what the cache keeps rebuilds a private Codec from the
// window and goes on alone.
package relay
