package serve

import (
	"cmp"
	"errors"
	"log/slog"
	"time"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The defaults of [Options] (docs/contract.md section 14.2).
const (
	// DefaultRetry is the reconnection delay a stream asks for, and the
	// Retry-After of a 503: 2 seconds.
	DefaultRetry = 2 * time.Second
	// DefaultHeartbeatInterval is the time between two heartbeats of an
	// idle or stalled stream: 15 seconds.
	DefaultHeartbeatInterval = 15 * time.Second
	// DefaultWriteTimeout is the longest one write may take to reach the
	// connection: 10 seconds.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultWindowTimeout is the longest the Engine waits on one call of
	// its window or of a host's hook: 5 seconds.
	DefaultWindowTimeout = 5 * time.Second
	// DefaultCacheBytes is the most transcoded output an Engine keeps for
	// one turn, in bytes: 256 KiB. The newest output is kept whatever its
	// size.
	DefaultCacheBytes = 256 << 10
)

// Options configures an [Engine]; every zero field means its default. The
// handlers of the packages stream, uistream and agui embed it.
type Options struct {
	// Retry is the reconnection delay: the version-1 stream asks for it
	// with a retry line, in whole milliseconds, and a 503 carries it as
	// Retry-After, in whole seconds (at least 1). 0 means [DefaultRetry];
	// a negative value is refused.
	Retry time.Duration

	// HeartbeatInterval is the time an idle stream waits before it sends a
	// heartbeat, the comment ": heartbeat", and the time between two
	// heartbeats while the window stalls. 0 means
	// [DefaultHeartbeatInterval]; a negative value sends none (a parked
	// client that went away is then noticed only at the turn's next frame).
	HeartbeatInterval time.Duration

	// WriteTimeout bounds each write to a stream's connection: a client
	// that does not take it in that time is dropped and resumes. Beyond the
	// kernel's socket buffer, a stream holds at most one write of its own:
	// one page of frames, or up to 32 KiB once parked. 0 means
	// [DefaultWriteTimeout]; a negative value sets no deadline. It
	// overrides the server's [net/http.Server.WriteTimeout] for streams.
	WriteTimeout time.Duration

	// WindowTimeout bounds each Read of the window and each call of a
	// host's hook before a stream starts: a request not yet answered then
	// gets 503 store-unavailable with Retry-After, and a stream sends a
	// heartbeat each HeartbeatInterval and reads again (section 14.2). 0
	// means [DefaultWindowTimeout]; a negative value sets no bound.
	WindowTimeout time.Duration

	// PageBytes is the most frame data read from the window at once for
	// one stream, in bytes (a larger frame is read alone). 0 means
	// [replay.DefaultPageBytes].
	PageBytes int

	// CacheBytes bounds the transcoded output kept for one turn's streams
	// to share, in bytes; the newest output is kept whatever its size, and
	// so is one a stream of the turn has still to write, up to 8 times
	// CacheBytes, so that streams woken together never fall behind one
	// another. The whole is freed when the turn's last stream ends. 0 means
	// [DefaultCacheBytes]. The version-1 stream keeps none.
	CacheBytes int

	// WaitOnRequest keeps every stream on its request's goroutine until it
	// ends, never taking its connection over.
	WaitOnRequest bool

	// Logger receives the errors no client is told about (a window or
	// hook failure, a window that broke its rules); nil logs nothing.
	Logger *slog.Logger

	// Observer receives each stream's moments: connect, resume, every
	// write of frames and its delivery, and the end (a refusal with its
	// code, the end of the stream, or a slow reader's drop), with the
	// turn's identity; nil means silent.
	Observer observe.Observer
}

// settings are Options with every default applied.
type settings struct {
	retry, heartbeat, write, window time.Duration // heartbeat, write, window: 0 for none
	page, cache                     int
	parking                         bool
	log                             *slog.Logger
	obs                             observe.Observer
}

// resolve returns o's settings, or an error for a field out of range.
func (o *Options) resolve() (settings, error) {
	if o == nil {
		o = &Options{}
	}
	if o.Retry < 0 {
		return settings{}, errors.New("serve: Options.Retry may not be negative")
	}
	s := settings{
		retry:     cmp.Or(o.Retry, DefaultRetry),
		heartbeat: max(cmp.Or(o.HeartbeatInterval, DefaultHeartbeatInterval), 0),
		write:     max(cmp.Or(o.WriteTimeout, DefaultWriteTimeout), 0),
		window:    max(cmp.Or(o.WindowTimeout, DefaultWindowTimeout), 0),
		page:      o.PageBytes,
		cache:     o.CacheBytes,
		parking:   !o.WaitOnRequest,
		log:       o.Logger,
		obs:       o.Observer,
	}
	if s.page <= 0 {
		s.page = replay.DefaultPageBytes
	}
	if s.cache <= 0 {
		s.cache = DefaultCacheBytes
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

// BodyLimits bounds the body of a POST that starts a stream, a bridge's
// (docs/contract.md section 12.6); every zero field means its default.
type BodyLimits struct {
	// MaxBodyBytes is the largest body read, in bytes; 0 means 1 MiB. A
	// larger one is refused 413 frame-too-large, before it is read when
	// its Content-Length says so.
	MaxBodyBytes int64
	// BodyTimeout bounds the reading of the body; 0 means 10 s and a
	// negative value sets no bound. A body that outlasts it is refused.
	BodyTimeout time.Duration
}
