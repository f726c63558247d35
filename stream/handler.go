package stream

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/relay"
	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The defaults of [HandlerOptions].
const (
	// DefaultRetry is the reconnection delay a stream asks for: 2 seconds.
	DefaultRetry = relay.DefaultRetry
	// DefaultHeartbeatInterval is the time between two heartbeats of an
	// idle stream: 15 seconds.
	DefaultHeartbeatInterval = relay.DefaultHeartbeatInterval
	// DefaultWriteTimeout is the longest one frame may take to reach the
	// connection: 10 seconds.
	DefaultWriteTimeout = relay.DefaultWriteTimeout
	// DefaultWindowTimeout is the longest the Handler waits on one call of
	// its window or of its Authorize hook: 5 seconds.
	DefaultWindowTimeout = relay.DefaultWindowTimeout
)

// HandlerOptions configures a Handler. Authorize is required; every other
// zero field means its default.
type HandlerOptions struct {
	// Authorize decides, on every connection, whether the caller may read key's
	// turn; it is called before the window is read. It returns nil to allow, an
	// error of code turn-not-found ([refusal.ErrTurnNotFound]) or unauthorized
	// ([refusal.ErrUnauthorized]) to deny, and any other error when it cannot
	// decide (its store is down).
	//
	// The hook is also what tells an unknown turn: a window treats a turn
	// it has never seen as empty and waits for its first frame, so the hook
	// denies a turn that does not exist. A denial and an unknown turn get
	// the same 404; an error that is not a denial gets 503, its text only
	// in the log.
	Authorize func(r *http.Request, key replay.Key) error

	// Key names the turn a request asks for; nil means [PathKey]. An error,
	// or an id that is empty, longer than 256 bytes, not valid UTF-8 or
	// holding NUL, CR or LF, is answered as an unknown turn (404).
	Key func(r *http.Request) (replay.Key, error)

	// Retry is the reconnection delay the stream asks of its client with a
	// retry line, in whole milliseconds; 0 means [DefaultRetry].
	Retry time.Duration

	// HeartbeatInterval is the time an idle stream waits before it sends a
	// heartbeat, the comment ": heartbeat" ([sse.AppendComment]); 0 means
	// [DefaultHeartbeatInterval] and a negative value sends none (a parked
	// client that went away is then noticed only at the turn's next frame).
	HeartbeatInterval time.Duration

	// WriteTimeout bounds each write of a frame: the handler sets it as the
	// connection's write deadline ([http.ResponseController]) before every
	// frame, and a client that does not take a frame in that time is
	// dropped; it resumes by Last-Event-ID. Beyond the kernel's socket
	// buffer, a stream holds at most one write of its own: one frame, or
	// up to 32 KiB of frames once parked. 0 means [DefaultWriteTimeout]
	// and a negative value sets no deadline. It overrides the server's
	// [http.Server.WriteTimeout] for the stream's responses.
	WriteTimeout time.Duration

	// WindowTimeout bounds each Read of the window and each call of
	// Authorize, so that a stalled store neither holds a request without a
	// status nor silences a stream (docs/contract.md section 14.2): a request
	// not yet answered then gets 503 store-unavailable with Retry-After,
	// and a stream sends a heartbeat and reads again. 0 means
	// [DefaultWindowTimeout]; a negative value sets no bound.
	WindowTimeout time.Duration

	// PageBytes is the most frame data the Handler reads from the window
	// at once for one stream, in bytes (a larger frame is read alone): a
	// reader far behind costs one page of memory. 0 means
	// [replay.DefaultPageBytes].
	PageBytes int

	// WaitOnRequest keeps every stream on its request's goroutine until it
	// ends, never taking its connection over (see Handler). A stream whose
	// ResponseWriter is not net/http's own (any middleware's wrapper) or
	// whose request is not HTTP/1.1 is never taken over anyway.
	WaitOnRequest bool

	// Logger receives the errors no client is told about (a window or hook
	// failure, a window that broke its rules); nil logs nothing.
	Logger *slog.Logger

	// Observer receives each stream's moments: connect, resume, every
	// write of frames and its delivery, and the end (a refusal with its
	// code, the end of the stream, or a slow reader's drop), with the
	// turn's identity; nil means silent. [observe.NewSlog](logger) turns on
	// structured logs.
	Observer observe.Observer
}

// Handler serves one turn's version-1 stream from a replay window as a
// resumable SSE response (docs/contract.md sections 10, 11 and 14): it
// authorizes every request, resumes after Last-Event-ID, replays the
// retained suffix page by page, goes live, and ends after the frame that
// ends the turn. Mount it under a pattern naming the turn, without a
// method, so that a method other than GET and HEAD gets its JSON 405
// (method-not-allowed with Allow) rather than [http.ServeMux]'s plain text,
//
//	mux.Handle("/conversations/{conversation}/turns/{turn}/events", h)
//
// and register [Handler.Close] with [http.Server.RegisterOnShutdown]. Its
// answers are those of section 14.3, each refusal with a [refusal.Body] and
// the status of section 12.5; 503 store-unavailable, with Retry-After,
// after Close or when Authorize or the window fails or exceeds
// [HandlerOptions.WindowTimeout].
//
// Frames are written as stored (section 10.1). A stream that ends before
// its turn did is aborted, never ended cleanly (section 14.2): a connection
// the Handler took over is closed without the last chunk; on a request's
// goroutine it panics with [http.ErrAbortHandler], which a middleware that
// recovers panics must let through. A caught-up stream parks without a
// goroutine of its own only under net/http's own ResponseWriter over
// HTTP/1.1 ([http.ResponseController.Hijack]), and otherwise, or with
// [HandlerOptions.WaitOnRequest], waits on its request's goroutine. A
// Handler is safe for concurrent use; make one with [NewHandler].
type Handler struct {
	tail         relay.Tail // the window, its page size, WindowTimeout and the heartbeat interval
	authorize    func(*http.Request, replay.Key) error
	key          func(*http.Request) (replay.Key, error)
	retry        time.Duration
	writeTimeout time.Duration
	parking      bool
	log          *slog.Logger
	obs          observe.Observer

	streams *relay.Streams  // the streams begun and not yet ended, for Close and Shutdown
	closing context.Context // streams.Closing(): done once Close is called

	mu   sync.Mutex
	hubs map[replay.Key]*hub // the turns that have parked subscribers
	bufs sync.Pool           // *[]byte write buffers of woken subscribers
}

// NewHandler returns a Handler serving turns from window. It fails when
// window or opts.Authorize is nil, or when a duration option is out of
// range (a negative Retry).
func NewHandler(window replay.Window, opts *HandlerOptions) (*Handler, error) {
	if window == nil {
		return nil, errors.New("stream: NewHandler needs a replay window")
	}
	if opts == nil || opts.Authorize == nil {
		return nil, errors.New("stream: NewHandler needs HandlerOptions.Authorize")
	}
	if opts.Retry < 0 {
		return nil, errors.New("stream: HandlerOptions.Retry may not be negative")
	}
	serving := relay.Options{
		HeartbeatInterval: opts.HeartbeatInterval, WriteTimeout: opts.WriteTimeout,
		WindowTimeout: opts.WindowTimeout, PageBytes: opts.PageBytes, Logger: opts.Logger,
	}
	h := &Handler{
		tail:         serving.NewTail(window),
		authorize:    opts.Authorize,
		key:          opts.Key,
		retry:        cmp.Or(opts.Retry, DefaultRetry),
		writeTimeout: serving.Write(),
		parking:      !opts.WaitOnRequest,
		obs:          opts.Observer,
	}
	h.log = h.tail.Log
	if h.key == nil {
		h.key = PathKey
	}
	h.streams = relay.NewStreams()
	h.closing = h.streams.Closing()
	h.hubs = make(map[replay.Key]*hub)
	return h, nil
}

// Close aborts every stream the Handler is serving, each after the frame it
// is writing, so that its client resumes elsewhere by Last-Event-ID, and
// answers every later request 503. It does not wait for the streams to
// end; Shutdown does.
// [http.Server.Shutdown] neither ends long responses nor knows the parked
// streams, whose connections the Handler took over: register Close with
// [http.Server.RegisterOnShutdown]. Close may be called more than once.
func (h *Handler) Close() { h.streams.Close() }

// Shutdown calls Close, then waits until every stream has ended (its last
// chunk written, its connection closed) or ctx ends, and returns ctx's
// error then. Call it after [http.Server.Shutdown], so that the process
// exits only once the parked streams have ended too.
func (h *Handler) Shutdown(ctx context.Context) error { return h.streams.Shutdown(ctx) }

// ServeHTTP answers one request for a turn's stream; see Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeRefusal(w, refusal.CodeMethodNotAllowed, msgMethod, nil)
		return
	}
	if h.closing.Err() != nil {
		h.unavailable(w, msgClosed)
		return
	}
	key, err := h.key(r)
	if err != nil || !validKey(key) {
		writeRefusal(w, refusal.CodeTurnNotFound, msgNotFound, nil)
		return
	}
	var rep streamReport
	r = rep.connect(h.obs, r, key)
	ctx, cancel := h.tail.Bounded(r.Context())
	defer cancel()
	if err := h.authorize(r.WithContext(ctx), key); err != nil {
		if code := refusal.CodeOf(err); code == refusal.CodeTurnNotFound || code == refusal.CodeUnauthorized {
			rep.refuse(refusal.CodeTurnNotFound, nil, 0, nil) // the code of the answer
			writeRefusal(w, refusal.CodeTurnNotFound, msgNotFound, nil)
			return
		}
		rep.refuse(refusal.CodeStoreUnavailable, err, 0, nil)
		h.log.WarnContext(r.Context(), "stream: authorize failed", "err", err)
		h.unavailable(w, msgUnavailable)
		return
	}
	cursor, err := cursorOf(r)
	if err != nil {
		e, _ := errors.AsType[*refusal.Error](err)
		rep.refuse(e.Code, nil, 0, nil)
		writeRefusal(w, e.Code, e.Message, nil) // ParseCursor's own fixed words, never the input
		return
	}
	b, frames, err := h.tail.Window.Read(ctx, key, cursor, h.tail.PageBytes)
	if err != nil {
		switch code := refusal.CodeOf(err); code {
		case refusal.CodeStaleCursor:
			rep.refuse(code, nil, cursor, &b)
			writeRefusal(w, code, msgStale, &b)
		case refusal.CodeCursorAhead:
			rep.refuse(code, nil, cursor, &b)
			writeRefusal(w, code, msgAhead, &b)
		default:
			if r.Context().Err() == nil {
				rep.refuse(refusal.CodeStoreUnavailable, err, cursor, nil)
				h.log.WarnContext(r.Context(), "stream: reading the window failed", "err", err)
				h.unavailable(w, msgUnavailable)
			}
			rep.close(err) // the client went away
		}
		return
	}
	cancel()
	rep.resume(cursor, b)
	if b.Ended && cursor == b.Latest {
		rep.close(nil)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !h.streams.Begin() {
		rep.refuse(refusal.CodeStoreUnavailable, nil, 0, nil) // the Handler is shutting down
		h.unavailable(w, msgClosed)
		return
	}
	h.serve(w, r, key, cursor, b, frames, &rep)
}

// unavailable answers store-unavailable (503) with message and a
// Retry-After of the stream's reconnection delay, in whole seconds, at
// least 1.
func (h *Handler) unavailable(w http.ResponseWriter, message string) {
	w.Header().Set("Retry-After", relay.RetryAfter(h.retry))
	writeRefusal(w, refusal.CodeStoreUnavailable, message, nil)
}

// cursorOf returns the request's resume cursor: the Last-Event-ID header,
// else the lastEventId query parameter, else 0.
func cursorOf(r *http.Request) (int64, error) {
	for _, values := range [...][]string{r.Header.Values("Last-Event-ID"), r.URL.Query()["lastEventId"]} {
		if len(values) > 1 {
			return 0, errBadCursor("a cursor is sent once")
		}
		if len(values) == 1 && values[0] != "" {
			return ParseCursor(values[0])
		}
	}
	return 0, nil
}
