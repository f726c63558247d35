package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The defaults of [WindowOptions].
const (
	// DefaultMaxFrames is the number of frames a Window retains per turn:
	// 10,000, as [replay.DefaultMaxFrames].
	DefaultMaxFrames = 10_000
	// DefaultMaxBytes is the frame data a Window retains per turn, in
	// bytes: 8 MiB, eight frames of the default frame limit.
	DefaultMaxBytes = 8 << 20
	// DefaultMaxAge is how long a live turn's frames are kept after its
	// newest frame: one hour, as [replay.DefaultMaxAge].
	DefaultMaxAge = time.Hour
	// DefaultEndedTTL is how long an ended turn's frames are kept after its
	// newest frame: five minutes, as [replay.DefaultEndedTTL].
	DefaultEndedTTL = 5 * time.Minute
	// DefaultTombstoneTTL is how long a turn's bounds are kept after its
	// newest frame, once its frames have expired: 24 hours.
	DefaultTombstoneTTL = 24 * time.Hour
	// DefaultCatchUpInterval is the time after which every waiting reader
	// reads the bounds again although no message came: 2 seconds.
	DefaultCatchUpInterval = 2 * time.Second
	// DefaultPatience is how long Read, Bounds and Wait keep retrying while
	// Redis cannot be reached or is loading before they return its error:
	// 10 seconds.
	DefaultPatience = 10 * time.Second
	// DefaultIdleUnsubscribe is how long a turn's channel stays subscribed
	// after its last waiter left: 10 seconds, so that a reader waiting
	// again after each frame does not subscribe again each time.
	DefaultIdleUnsubscribe = 10 * time.Second
)

// WindowOptions configures a Window; nil means all defaults, and every
// zero field its default.
type WindowOptions struct {
	// Prefix starts the names of the Window's keys and channels; "" means
	// [DefaultPrefix]. Windows that share a turn share a prefix.
	Prefix string
	// MaxFrameBytes is the largest canonical envelope Append stores, in
	// bytes: 0 means [chatprotocol.DefaultMaxFrameBytes] (1 MiB, the
	// reader's default) and a negative value no limit (see
	// [replay.EncodeFrame]).
	MaxFrameBytes int
	// MaxFrames is the number of frames retained per turn: the append of
	// frame n drops frame n-MaxFrames (XTRIM MINID) and moves Lower to it,
	// in the same script. 0 means [DefaultMaxFrames], a negative value no
	// count bound.
	MaxFrames int
	// MaxBytes bounds the frame data retained per turn, in bytes: the
	// append that goes beyond it drops the oldest frames until the rest
	// fit, the newest kept whatever its size. 0 means [DefaultMaxBytes], a
	// negative value no byte bound.
	MaxBytes int
	// MaxAge is how long a live turn's frames are kept after its newest
	// frame (the stream key's expiry, set by every append); EndedTTL the
	// same once the turn has ended. Then Lower = Latest. 0 means
	// [DefaultMaxAge] and [DefaultEndedTTL]; a negative MaxAge means no
	// expiry.
	MaxAge, EndedTTL time.Duration
	// TombstoneTTL is how long a turn's bounds are kept after its newest
	// frame, at least as long as its frames; then the turn reads as unknown
	// (0, 0). 0 means [DefaultTombstoneTTL], a negative value forever.
	TombstoneTTL time.Duration
	// CatchUpInterval is the time after which every waiting reader reads
	// the bounds although no message came, the net under a lost message; 0
	// means [DefaultCatchUpInterval], a negative value never (a resubscribe
	// after a lost connection still wakes every reader).
	CatchUpInterval time.Duration
	// Patience is how long Read, Bounds and Wait retry while Redis cannot
	// be reached or is loading its data (a restart, a failover), before
	// they return the error; 0 means [DefaultPatience], a negative value no
	// retry.
	Patience time.Duration
	// IdleUnsubscribe is how long a turn's channel stays subscribed after
	// its last waiter left; 0 means [DefaultIdleUnsubscribe].
	IdleUnsubscribe time.Duration
	// Logger receives the subscriber's connection failures; nil logs
	// nothing.
	Logger *slog.Logger
}

// Window is a [replay.Window] on Redis that every instance of a host
// shares, so that a client's reconnect may land on any instance
// (docs/contract.md sections 11 and 11.9). Each turn is one Redis stream
// whose entry ids are the frames' seqs ("<seq>-0"), beside a small string of
// its bounds; the frames' event types and canonical bytes are returned by
// [Window.Read] as appended.
//
// [Window.Append] runs one Lua script: it checks that the turn's latest
// seq is the frame's seq minus one and that the turn has not ended, adds
// the entry, applies the count and byte retention, sets the expiries and
// publishes the bounds on the turn's channel, all atomically. [Window.Wait]
// costs one Pub/Sub connection per Window, whatever the number of
// waiters: the Window subscribes to the channels of the turns it waits
// on, and wakes their waiters on each message, on each (re)subscription
// and at the latest after [WindowOptions.CatchUpInterval].
//
// A Window is safe for concurrent use; Close it when done.
type Window struct {
	client          redis.UniversalClient
	prefix          string
	maxFrameBytes   int
	maxFrames       int // 0: no count bound
	maxBytes        int // -1: no byte bound
	maxAge          time.Duration
	endedTTL        time.Duration
	tombstoneTTL    time.Duration
	catchUp         time.Duration
	patience        time.Duration
	idleUnsubscribe time.Duration
	log             *slog.Logger

	sub          *subscriber
	batch        batcher
	appendScript *redis.Script // appendSource with this Window's options
	fetches      fetches

	ctx    context.Context // done on Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var _ replay.Window = (*Window)(nil)

// NewWindow returns a Window on client's Redis and starts its subscriber.
// The client is the caller's: Close does not close it. It fails when
// client is nil or opts is out of range (a negative EndedTTL).
func NewWindow(client redis.UniversalClient, opts *WindowOptions) (*Window, error) {
	if client == nil {
		return nil, errors.New("redisstore: NewWindow needs a client")
	}
	var o WindowOptions
	if opts != nil {
		o = *opts
	}
	if o.EndedTTL < 0 {
		return nil, errors.New("redisstore: negative WindowOptions.EndedTTL")
	}
	w := &Window{
		client:          client,
		prefix:          o.Prefix,
		maxFrameBytes:   o.MaxFrameBytes,
		maxFrames:       max(orDefault(o.MaxFrames, DefaultMaxFrames), 0),
		maxBytes:        max(orDefault(o.MaxBytes, DefaultMaxBytes), -1),
		maxAge:          orDefault(o.MaxAge, DefaultMaxAge),
		endedTTL:        orDefault(o.EndedTTL, DefaultEndedTTL),
		tombstoneTTL:    orDefault(o.TombstoneTTL, DefaultTombstoneTTL),
		catchUp:         orDefault(o.CatchUpInterval, DefaultCatchUpInterval),
		patience:        orDefault(o.Patience, DefaultPatience),
		idleUnsubscribe: orDefault(o.IdleUnsubscribe, DefaultIdleUnsubscribe),
		log:             o.Logger,
	}
	if w.prefix == "" {
		w.prefix = DefaultPrefix
	}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.batch.w = w
	w.appendScript = newAppendScript(w)
	w.sub = newSubscriber(w)
	w.wg.Go(w.sub.receive)
	w.wg.Go(w.sub.send)
	return w, nil
}

// orDefault returns v, or def when v is zero.
func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Close stops the subscriber, closing its connection, and ends every Wait
// in progress with an error. The client is the caller's: Close does not
// close it. Close may be called more than once.
func (w *Window) Close() {
	w.cancel()
	w.sub.wake("")
	w.sub.close()
	w.wg.Wait()
}

// Capabilities returns what a Window lets a host declare
// (docs/contract.md sections 8 and 11.9): connectionReplay true, and false
// for everything else. Redis keeps the frames across a restart only as far
// as its append-only file was synced, and a replica promoted on failover
// may lack the newest ones: the window replays what was streamed, it is no
// durable history (persistedHistory) and no store of recovery.
func (w *Window) Capabilities() chatprotocol.ChatCapabilities {
	return chatprotocol.ChatCapabilities{ConnectionReplay: true}
}

// errClosed is the error of a call on a closed Window.
var errClosed = errors.New("redisstore: the window is closed")
