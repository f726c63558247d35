// Package redisstore is a replay window on Redis: [Window], a
// [replay.Window] that the instances of a host share, so that a client's
// reconnect may land on any of them (docs/contract.md sections 11 and
// 11.9), and a conversation store beside it ([ConversationStore]). It is
// a module of its own, so that the root module links no Redis client; it
// uses github.com/redis/go-redis/v9 and takes any
// [redis.UniversalClient].
//
// # What it keeps
//
// Each turn is one Redis stream, <prefix>{<conversation>:<turn>}:f, whose
// entry ids are the frames' seqs ("<seq>-0", so that XADD refuses an id
// not above the last), beside a string of the turn's bounds, "<latest>
// <lower> <ended> <bytes>", <prefix>{…}:m; the ids are escaped, and the braces keep
// a turn's keys in one Redis Cluster slot. [Window.Append] is one Lua
// script: the frame is stored only as the turn's next seq and not after
// its end, so that two writers, or a writer that lost an acknowledgement
// and appends again, can neither leave a gap nor store a seq twice; the
// writer settles an unknown outcome with [Window.Bounds], as a turn producer
// does; the appends of a Window that wait at the same moment share a
// pipeline. [Window.Read] is one script too: the bounds and a page of at
// most the asked bytes, at least one frame. A Window reads a frame once
// however many of its readers follow the turn: the readers of one page
// share one call, a reader joins a call in flight that started after its
// frame was known to be stored, and the Window keeps the newest frames its
// reads returned (64 KiB per turn it waits on), from which it serves the
// readers that come later, while nothing newer is known of the turn.
//
// Retention is by count and bytes (the append drops the oldest entries,
// XTRIM MINID, and moves Lower, never the newest frame) and by time: the
// stream expires [WindowOptions.MaxAge] after a live turn's newest frame
// and [WindowOptions.EndedTTL] after an ended turn's; its bounds stay for
// [WindowOptions.TombstoneTTL], with Lower = Latest, so that a reader
// resuming from an older cursor is told stale-cursor ([*replay.CursorError]
// with the bounds) rather than cursor-ahead.
//
// # Waiting
//
// Every append publishes the turn's bounds after it on the turn's channel,
// <prefix>{…}:n. A Window holds one Pub/Sub connection, whatever the
// number of its waiters: it subscribes to the channel of each turn it
// waits on (and unsubscribes after [WindowOptions.IdleUnsubscribe] without
// waiters). A message wakes the turn's waiters with its bounds, which they
// return without a read of their own; on every confirmation of the
// subscription (the first, and those after go-redis reconnects) and every
// [WindowOptions.CatchUpInterval] they read the bounds instead, so that no
// frame stored before the subscription took effect, or while the
// connection was down, is missed. No waiter holds a connection of its own.
// A message also starts the read of the frames it announces, and wakes
// the waiters once that read is done, so that their reads take its frames
// without a round trip of their own. When the connection fails,
// or a subscription is confirmed again, the Window forgets what the
// messages told and the frames it kept, as it does when a turn's messages
// go back: Redis may have lost the newest frames, which the next reads
// find.
//
// # What it does not promise
//
// Redis is not a durable compare-and-swap: what an acknowledged append
// stored survives a restart only as far as the append-only file was
// synced (appendfsync everysec loses up to a second; always costs a sync
// per write), and a replica promoted on failover may lack the newest
// frames, so that a turn's latest seq may go back. After such a loss a
// reader is refused (cursor-ahead) or reads the frames again, and the
// producer learns the turn's bounds anew; an interrupted turn is not
// recovered from the window. A Read reaches every frame whose Append
// returned before it through the same Window, or that the Window heard of
// (a message, an earlier read); a frame appended through another instance
// that this one has not heard of yet may be missing from the page and the
// bounds, as if the Read had run just before that Append, and its message,
// on its way, wakes the Wait that follows. [Window.Bounds] always reads.
// Keep the recovery store and the answer store on PostgreSQL or another
// durable store (pgstore): a host with this
// window declares connectionReplay, and interruptedTurnRecovery only with
// recovery on such a store ([Window.Capabilities]).
//
// Reads and waits retry for [WindowOptions.Patience] while Redis cannot
// be reached or is loading, and return as soon as their context ends.
//
// # Conversations
//
// [ConversationStore] is a [conversation.Store] on the same server
// (docs/contract.md sections 11.9 and 20.1): a conversation's record, its
// turns and their ended states under one hash tag, each write one script
// (of concurrent starts, on any instance, exactly one wins), each read one
// snapshot. Its running turn is the one a resume or a stop on any instance
// finds. Like the window, it is no durable history: it declares no
// persistedHistory.
package redisstore
