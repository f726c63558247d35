package relay

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The defaults of Options, which the stream package's HandlerOptions
// publishes (docs/contract.md section 14.2), and the reconnection delay a
// 503 asks for.
const (
	DefaultHeartbeatInterval = 15 * time.Second
	DefaultWriteTimeout      = 10 * time.Second
	DefaultWindowTimeout     = 5 * time.Second
	DefaultRetry             = 2 * time.Second
)

// Options configures a Server; every zero field means its default, as in
// the stream package's HandlerOptions.
type Options struct {
	HeartbeatInterval time.Duration // negative: none
	WriteTimeout      time.Duration // negative: no deadline
	BodyTimeout       time.Duration // a POST body's read deadline ([reqbody.Limits.Timeout]); negative: none
	WindowTimeout     time.Duration // negative: no bound
	PageBytes         int
	Cache             *Cache // nil: a Cache of its own
	Logger            *slog.Logger
}

// Server serves turns of one window as a bridge's streams. Safe for
// concurrent use.
type Server struct {
	Tail
	*Streams
	writeTimeout time.Duration
	bodyTimeout  time.Duration
	cache        *Cache
	waits        waiters
}

// NewServer returns a Server of window configured by opts (nil: defaults).
func NewServer(window replay.Window, opts *Options) *Server {
	if opts == nil {
		opts = &Options{}
	}
	s := &Server{Tail: opts.NewTail(window), Streams: NewStreams(), writeTimeout: opts.Write(), bodyTimeout: opts.BodyTimeout, cache: opts.Cache}
	if s.cache == nil {
		s.cache = NewCache(0, 0)
	}
	return s
}

// NewTail returns the Tail of window that o configures, every zero field
// its default (a nil Logger logs nothing).
func (o *Options) NewTail(window replay.Window) Tail {
	t := Tail{
		Window:    window,
		PageBytes: o.PageBytes,
		Timeout:   max(cmp.Or(o.WindowTimeout, DefaultWindowTimeout), 0),
		Heartbeat: max(cmp.Or(o.HeartbeatInterval, DefaultHeartbeatInterval), 0),
		Log:       o.Logger,
	}
	if t.PageBytes <= 0 {
		t.PageBytes = replay.DefaultPageBytes
	}
	if t.Log == nil {
		t.Log = slog.New(slog.DiscardHandler)
	}
	return t
}

// Write returns the write timeout o configures, its default for 0;
// negative: no deadline.
func (o *Options) Write() time.Duration { return cmp.Or(o.WriteTimeout, DefaultWriteTimeout) }

// First reads the first page of key's turn, within the window timeout.
func (s *Server) First(ctx context.Context, key replay.Key) (replay.Bounds, []replay.Frame, error) {
	ctx, cancel := s.Bounded(ctx)
	defer cancel()
	return s.Window.Read(ctx, key, 0, s.PageBytes)
}

// Stream is what one response serves: a turn from its first frame,
// transcoded by the Codecs NewCodec makes (shared under Variant), with the
// response's headers and the bytes written before the first frame and
// after the output that ends the stream.
type Stream struct {
	Key      replay.Key
	Variant  string
	NewCodec func() Codec
	Header   http.Header
	Prologue []byte
	Epilogue []byte
}

// errGap is the error of a window suffix that is not contiguous.
var errGap = errors.New("relay: gap in the window's suffix")

// heartbeat is the comment an idle stream sends (docs/contract.md section
// 10.1): parsers of data-only protocols skip it.
var heartbeat = []byte(": heartbeat\n\n")

// Serve writes st as an event stream: 200, the headers, the prologue, the
// output of every frame from the first (b and frames, the first page, as
// First read it), live until the Codec is done, then the epilogue. A
// stream that ends otherwise while its client is still there (Close, a
// window failure, a write that outlasted the write timeout) is aborted with
// [http.ErrAbortHandler], never ended cleanly (docs/contract.md section
// 14.2). A HEAD request gets the headers only. It reports false, writing
// nothing, once the Server is closing.
func (s *Server) Serve(w http.ResponseWriter, r *http.Request, st *Stream, b replay.Bounds, frames []replay.Frame) bool {
	if !s.Begin() {
		return false
	}
	clean := false
	defer func() {
		s.End()
		if !clean && r.Context().Err() == nil {
			panic(http.ErrAbortHandler) // never a clean end: the client resumes
		}
	}()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(s.Closing(), cancel)()
	rc := http.NewResponseController(w)
	out := &writer{w: w, rc: rc, timeout: s.writeTimeout}
	h := w.Header()
	for name, values := range st.Header {
		h[name] = values
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		clean = true
		return true // the headers only
	}
	if out.write(st.Prologue) != nil || out.flush() != nil {
		return true
	}
	t := &transcoder{shared: s.cache.get(CacheKey{st.Key, st.Variant}, st.NewCodec), newCodec: st.NewCodec}
	beat := func() error {
		if err := out.write(heartbeat); err != nil {
			return err
		}
		return out.flush()
	}
	var cursor int64
	for {
		if len(frames) == 0 && cursor < b.Latest {
			s.Log.ErrorContext(ctx, "relay: the window returned no frame below its latest", "after", cursor, "latest", b.Latest)
			return true
		}
		for _, f := range frames {
			if f.Seq != cursor+1 {
				s.Log.ErrorContext(ctx, "relay: the window's suffix is not contiguous", "after", cursor, "seq", f.Seq)
				return true
			}
			chunk, err := t.next(ctx, s, st.Key, f)
			if err != nil {
				s.Log.ErrorContext(ctx, "relay: transcoding failed", "seq", f.Seq, "err", err)
				return true
			}
			if out.write(chunk) != nil {
				return true
			}
			cursor = f.Seq
			if t.done {
				clean = out.write(st.Epilogue) == nil && out.flush() == nil
				return true
			}
		}
		if out.flush() != nil {
			return true
		}
		if b.Ended && cursor >= b.Latest {
			// A turn that ended without an output that ends the stream
			// (a Codec's bug): an abort tells the client it is incomplete.
			s.Log.ErrorContext(ctx, "relay: the turn ended but its output did not", "seq", cursor)
			return true
		}
		var err error
		if cursor < b.Latest {
			b, frames, err = s.Read(ctx, st.Key, cursor, beat) // the next page
		} else {
			b, frames, err = s.woken(ctx, st.Key, cursor, beat)
		}
		if err != nil {
			return true
		}
	}
}

// woken waits in the turn's shared wait, then reads the page after cursor,
// the first Read bounded by the wait's shared bound.
func (s *Server) woken(ctx context.Context, key replay.Key, cursor int64, beat func() error) (replay.Bounds, []replay.Frame, error) {
	w, err := s.share(ctx, key, cursor, beat)
	if err != nil {
		return replay.Bounds{}, nil, err
	}
	b, frames, err := s.Window.Read(w.wake, key, cursor, s.PageBytes)
	stalled := err != nil && ctx.Err() == nil && errors.Is(w.wake.Err(), context.DeadlineExceeded)
	w.release()
	if stalled {
		if err := beat(); err != nil {
			return b, nil, err
		}
		return s.Read(ctx, key, cursor, beat)
	}
	return b, frames, err
}

// Tail reads a turn of a window as a stream does (docs/contract.md section
// 14.2): every call of the window bounded by Timeout, heartbeats while the
// window stalls or the turn is idle. Its zero fields mean no bound.
type Tail struct {
	Window    replay.Window
	PageBytes int
	Timeout   time.Duration // each Read, and each host hook call; 0: none
	Heartbeat time.Duration // between heartbeats of an idle stream; 0: none
	Log       *slog.Logger
}

// Bounded returns ctx bounded by Timeout, for one call of the window or of
// a host hook.
func (t *Tail) Bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if t.Timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, t.Timeout)
}

// Read reads the page of key's turn after cursor, each Read bounded by
// Timeout: while the window stalls it sends a heartbeat with beat and
// reads again. It returns the window's error, ctx's, or a heartbeat's.
func (t *Tail) Read(ctx context.Context, key replay.Key, cursor int64, beat func() error) (replay.Bounds, []replay.Frame, error) {
	for {
		rctx, cancel := t.Bounded(ctx)
		b, frames, err := t.Window.Read(rctx, key, cursor, t.PageBytes)
		stalled := err != nil && ctx.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded)
		cancel()
		switch {
		case stalled:
			if err := beat(); err != nil {
				return b, nil, err
			}
		case err != nil:
			if ctx.Err() == nil {
				t.Log.WarnContext(ctx, "reading the window failed", "after", cursor, "err", err)
			}
			return b, nil, err
		default:
			return b, frames, nil
		}
	}
}

// Wait waits for a frame after cursor or the end of the turn, sending a
// heartbeat with beat each time Heartbeat passes without one. It returns
// the window's error, ctx's, or a heartbeat's.
func (t *Tail) Wait(ctx context.Context, key replay.Key, cursor int64, beat func() error) error {
	for {
		_, idle, err := t.WaitOnce(ctx, key, cursor)
		if !idle {
			if err != nil && ctx.Err() == nil {
				t.Log.WarnContext(ctx, "waiting on the window failed", "after", cursor, "err", err)
			}
			return err
		}
		if err := beat(); err != nil {
			return err
		}
	}
}

// WaitOnce waits on the window at most Heartbeat; idle reports that the
// interval passed with nothing to tell.
func (t *Tail) WaitOnce(ctx context.Context, key replay.Key, cursor int64) (b replay.Bounds, idle bool, err error) {
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if t.Heartbeat > 0 {
		wctx, cancel = context.WithTimeout(ctx, t.Heartbeat)
	}
	defer cancel()
	b, err = t.Window.Wait(wctx, key, cursor)
	idle = err != nil && ctx.Err() == nil && errors.Is(wctx.Err(), context.DeadlineExceeded)
	return b, idle, err
}

// writer writes a response's bytes, each write within the write timeout.
type writer struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

func (o *writer) write(p []byte) error {
	if len(p) == 0 {
		return nil
	}
	if o.timeout > 0 {
		o.rc.SetWriteDeadline(time.Now().Add(o.timeout)) // http.ErrNotSupported: no deadline to set
	}
	_, err := o.w.Write(p)
	return err
}

func (o *writer) flush() error { return o.rc.Flush() }

// RetryAfter is the Retry-After of a 503: whole seconds, at least 1.
func RetryAfter(d time.Duration) string {
	return strconv.FormatInt(max(int64(d/time.Second), 1), 10)
}

// ServeTurn serves st's turn from its first frame (see Serve), after the
// answers that come before a stream (docs/contract.md section 18.3): 204
// when resume and the turn has ended, 410 stale-cursor with the bounds when
// the window no longer holds the turn's first frame (pruned, or the whole
// turn evicted after its end), 503 store-unavailable when the Server is
// closing or the window fails or does not answer in time.
func (s *Server) ServeTurn(w http.ResponseWriter, r *http.Request, st *Stream, resume bool) {
	if s.Closed() {
		s.Unavailable(w)
		return
	}
	b, frames, err := s.First(r.Context(), st.Key)
	if ce, ok := errors.AsType[*replay.CursorError](err); ok && refusal.CodeOf(err) == refusal.CodeStaleCursor {
		b, err = ce.Bounds, nil // the window's refusal of cursor 0: its bounds say which answer
	}
	switch {
	case err != nil:
		if r.Context().Err() == nil {
			s.Log.WarnContext(r.Context(), "bridge: reading the window failed", "err", err)
			s.Unavailable(w)
		}
	case resume && b.Ended:
		w.WriteHeader(http.StatusNoContent)
	case b.Lower > 0:
		refuseBounds(w, refusal.CodeStaleCursor, "the turn's first frames are no longer retained", b)
	case !s.Serve(w, r, st, b, frames):
		s.Unavailable(w)
	}
}
