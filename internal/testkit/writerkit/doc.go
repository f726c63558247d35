// Package writerkit is the shared harness of the serving tests that hold
// the three stream handlers (the version-1 stream, the uistream and agui
// bridges) to one behaviour whatever writes their responses
// (docs/contract.md section 14.2): an abort reaches Node's fetch as an
// error and a turn's end as a clean end ([FetchAborts]); a ResponseWriter
// that cannot flush gets a JSON 500 before any body, and one that offers
// Unwrap still streams ([NonFlushingWriters]); a middleware's wrapper sees
// every byte of the body ([WrapperNeverBypassed]); heartbeats keep their
// interval while the window stalls ([HeartbeatsDuringStall]).
//
// Each package's test file describes its handler as a [Subject] and calls
// the scenarios; the pieces they are made of (a [Turn] appended by hand,
// the ResponseWriter wrappers, a [StallingWindow], a [BodyReader] that
// timestamps heartbeats, a [Fetch] run of the Node script fetch-body.mjs)
// are exported for tests of their own. Every wait has a deadline: a
// handler that misbehaves fails a test, it never hangs one. Nothing here
// is part of the module's API; only tests import it.
package writerkit
