// Package serve is the serving core every stream of the module shares
// (docs/contract.md sections 14 and 18): an [Engine] serves the turns of one
// replay window as event streams, each stream written by its protocol's
// [Codec]: the version-1 stream writes the stored frames as they are (no
// Codec), and a front-end bridge transcodes them.
//
// The Engine reads the window page by page within [Options.WindowTimeout],
// sends heartbeats while a turn is idle or its window stalls, bounds every
// write by [Options.WriteTimeout], and aborts, never ends cleanly, a stream
// that ends before its output did (section 14.2). A caught-up stream parks
// without a goroutine of its own when its ResponseWriter offers
// [http.Hijacker] itself (net/http's own, over HTTP/1.1): one window wait
// per turn wakes every parked stream of it. A Codec's output of a frame is
// computed once for every stream of a turn and kept, bounded in bytes
// ([Options.CacheBytes]), while a stream of the turn is served.
//
// The handlers of the packages stream, uistream and agui embed [Options] in
// their own options and serve through an Engine; a fourth protocol is one
// Codec.
package serve
