package serve

import (
	"context"
	"errors"
	"hash/maphash"
	"log/slog"
	"strconv"
	"sync"

	"github.com/Papercusp/chat-protocol-go/internal/notify"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// Engine serves the turns of one replay window as event streams (see the
// package documentation and [Engine.Serve]). Safe for concurrent use; make
// one with [NewEngine] and register [Engine.Close] with
// [net/http.Server.RegisterOnShutdown].
type Engine struct {
	window replay.Window
	set    settings

	closing context.Context // done once Close is called
	close   context.CancelFunc
	mu      sync.Mutex
	streams int           // the streams begun and not yet ended; guarded by mu
	drained notify.Signal // broadcast when streams drops to 0, for Shutdown

	hubMu sync.Mutex
	hubs  map[replay.Key]*hub // the turns that have parked streams; guarded by hubMu

	cache cache
	seed  maphash.Seed // for the fingerprints of cached frames
	bufs  sync.Pool    // *[]byte write buffers of woken streams
}

// NewEngine returns an Engine serving turns of window configured by opts
// (nil: the defaults). It fails when window is nil or an option is out of
// range.
func NewEngine(window replay.Window, opts *Options) (*Engine, error) {
	if window == nil {
		return nil, errors.New("serve: NewEngine needs a replay window")
	}
	set, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	e := &Engine{window: window, set: set, hubs: make(map[replay.Key]*hub), seed: maphash.MakeSeed()}
	e.closing, e.close = context.WithCancel(context.Background())
	e.cache.init(set.cache)
	return e, nil
}

// Close aborts every stream the Engine serves, each after the write it is
// making, so that its client resumes elsewhere, and answers every later
// request 503. It does not wait for the streams to end; Shutdown does.
// Close may be called more than once.
func (e *Engine) Close() { e.close() }

// Shutdown calls Close, then waits until every stream has ended (its last
// write made, its connection closed) or ctx ends, and returns ctx's error
// then. Call it after [net/http.Server.Shutdown]: the streams whose
// connections the Engine took over are not the server's to wait for.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.Close()
	return e.drained.Wait(ctx, &e.mu, func() bool { return e.streams == 0 })
}

// Closed reports whether Close was called.
func (e *Engine) Closed() bool { return e.closing.Err() != nil }

// Bounded returns ctx bounded by [Options.WindowTimeout], for one call of
// the window or of a host's hook.
func (e *Engine) Bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if e.set.window <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, e.set.window)
}

// RetryAfter is the Retry-After of the Engine's 503 answers: the
// reconnection delay in whole seconds, at least 1.
func (e *Engine) RetryAfter() string {
	return strconv.FormatInt(max(int64(e.set.retry.Seconds()), 1), 10)
}

// begin counts a stream that starts, or reports false once closing.
func (e *Engine) begin() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing.Err() != nil {
		return false
	}
	e.streams++
	return true
}

// end counts a stream that ended.
func (e *Engine) end() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.streams--; e.streams == 0 {
		e.drained.Broadcast()
	}
}

// Logger returns the logger of [Options.Logger], a discarding one when it
// was nil.
func (e *Engine) Logger() *slog.Logger { return e.set.log }
