package stream

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/notify"
	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The defaults of HandlerOptions.
const (
	// DefaultRetry is the reconnection delay a stream asks for: 2 seconds.
	DefaultRetry = 2 * time.Second
	// DefaultHeartbeatInterval is the time between two heartbeats of an
	// idle stream: 15 seconds.
	DefaultHeartbeatInterval = 15 * time.Second
	// DefaultWriteTimeout is the longest one frame may take to reach the
	// connection: 10 seconds.
	DefaultWriteTimeout = 10 * time.Second
)

// HandlerOptions configures a Handler. Authorize is required; every other
// zero field means its default.
type HandlerOptions struct {
	// Authorize decides, on every connection, whether the caller may read
	// key's turn; it is called before the window is read. It returns nil to
	// allow, an error of code turn-not-found (refusal.ErrTurnNotFound) or
	// unauthorized (refusal.ErrUnauthorized) to deny, and any other error when it cannot decide (its store is down).
	//
	// The hook is also what tells an unknown turn: a window treats a turn
	// it has never seen as empty and waits for its first frame, so the hook
	// denies a turn that does not exist. A denial and an unknown turn get
	// the same 404; an error that is not a denial gets 503, its text only
	// in the log.
	Authorize func(r *http.Request, key replay.Key) error

	// Key names the turn a request asks for; nil means PathKey. An error,
	// or an id that is empty, longer than 256 bytes, not valid UTF-8 or
	// holding NUL, CR or LF, is answered as an unknown turn (404).
	Key func(r *http.Request) (replay.Key, error)

	// Retry is the reconnection delay the stream asks of its client with a
	// retry line, in whole milliseconds; 0 means DefaultRetry.
	Retry time.Duration

	// HeartbeatInterval is the time an idle stream waits before it sends a
	// heartbeat, the comment ": heartbeat" (sse.AppendComment); 0 means
	// DefaultHeartbeatInterval and a negative value sends none (a parked
	// client that went away is then noticed only at the turn's next frame).
	HeartbeatInterval time.Duration

	// WriteTimeout bounds each write of a frame: the handler sets it as the
	// connection's write deadline (http.ResponseController) before every
	// frame, and a client that does not take a frame in that time is
	// dropped; it resumes by Last-Event-ID. Beyond the kernel's socket
	// buffer, a stream holds at most one write of its own: one frame, or
	// up to 32 KiB of frames once parked. 0 means DefaultWriteTimeout
	// and a negative value sets no deadline. It overrides the server's
	// http.Server.WriteTimeout for the stream's responses.
	WriteTimeout time.Duration

	// WaitOnRequest keeps every stream on its request's goroutine until it
	// ends, never taking its connection over (see Handler): for a
	// ResponseWriter whose middleware transforms the body (compression),
	// or a server that must keep seeing every connection (ConnState,
	// Shutdown's wait). An idle stream then costs what net/http holds for
	// a response, about 27 KiB.
	WaitOnRequest bool

	// Logger receives the errors no client is told about (a window or hook
	// failure, a window that broke its rules); nil logs nothing.
	Logger *slog.Logger

	// Observer receives each stream's moments: connect, resume, every
	// write of frames and its delivery, and the end (a refusal with its
	// code, the end of the stream, or a slow reader's drop), with the
	// turn's identity; nil means silent. observe.NewSlog(logger) turns on
	// structured logs.
	Observer observe.Observer
}

// Handler serves one turn's version-1 stream from a replay window as a
// resumable SSE response (docs/contract.md sections 10, 11 and 14). Mount
// it on a GET pattern naming the turn, for example
//
//	mux.Handle("GET /conversations/{conversation}/turns/{turn}/events", h)
//
// and register Close with http.Server.RegisterOnShutdown.
//
// On every request, in this order:
//
//   - after Close: 503, code store-unavailable;
//   - the turn (HandlerOptions.Key) must be a well-formed key, and
//     HandlerOptions.Authorize must allow the caller: else 404 with the
//     same headers and body, {"code":"turn-not-found","message":"no such
//     turn"}, whether the turn is unknown, malformed or not the caller's;
//     a hook that fails otherwise gives 503, code store-unavailable;
//   - the cursor is the Last-Event-ID header, else the lastEventId query
//     parameter (for clients that cannot set a header), else 0: an empty
//     value counts as absent, and a value that ParseCursor refuses (or a
//     repeated one) is 400, code invalid-cursor;
//   - a cursor below the window's retained lower bound is 410 Gone, code
//     stale-cursor, and one beyond its latest seq is 409 Conflict, code
//     cursor-ahead, both with the bounds: {"code", "message", "lower",
//     "latest"}; the stream never skips frames silently;
//   - a cursor at the latest seq of a turn that has ended is 204 No
//     Content, which stops an EventSource from reconnecting;
//   - otherwise 200 and the event stream: first a heartbeat event
//     (sse.EventHeartbeat, data {"tsMs":N}) with a retry line
//     (HandlerOptions.Retry), then every retained frame after
//     the cursor, then the frames as they are appended (read, write, wait,
//     read: none is skipped or sent twice), and heartbeat comments while
//     idle. A
//     frame is written as stored, never parsed again: id is its decimal
//     seq, event its type, data its bytes. The response ends after the
//     frame that ends the turn, when the window fails, and when a write
//     takes longer than HandlerOptions.WriteTimeout.
//
// A HEAD request (which a GET pattern also matches) gets the 200 headers
// only. Refusal bodies are JSON (see ErrorBody). A client that goes away is a
// disconnect, never a cancellation: the Handler only reads the window and
// never touches the turn.
//
// Clients apply the id line at different times. Browsers' EventSource and
// the npm eventsource package apply it when the frame is dispatched, so a
// cut connection resumes from the last whole frame; a client that applies
// the id as soon as its line arrives (as @microsoft/fetch-event-source
// 2.0.1 does) loses the frame when a connection is cut right after its id
// line, and resumes after it.
//
// An idle stream costs no goroutine over HTTP/1.x: once a stream has
// caught up with its turn, the Handler takes its connection over
// (http.ResponseController.Hijack), goes on writing the same chunked body
// itself, and parks it; one goroutine per turn waits on the window for all
// the turn's parked streams (replay.Window.Wait) and wakes them to write
// what comes, or a heartbeat. A parked client that went away is noticed at
// the next write, at the latest the second heartbeat. Where the connection
// cannot be taken over (HTTP/2, a ResponseWriter that hides Hijack), or
// with HandlerOptions.WaitOnRequest, the stream waits on its request's
// goroutine instead. A Handler is safe for
// concurrent use; make one with NewHandler.
type Handler struct {
	window       replay.Window
	authorize    func(*http.Request, replay.Key) error
	key          func(*http.Request) (replay.Key, error)
	retry        time.Duration
	heartbeat    time.Duration
	writeTimeout time.Duration
	parking      bool
	log          *slog.Logger
	obs          observe.Observer

	closing context.Context // done once Close is called
	close   context.CancelFunc

	mu      sync.Mutex
	hubs    map[replay.Key]*hub // the turns that have parked subscribers
	streams int                 // the streams begun and not yet ended
	drained notify.Signal       // broadcast when streams drops to 0, for Shutdown
	bufs    sync.Pool           // *[]byte write buffers of woken subscribers
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
	h := &Handler{
		window:       window,
		authorize:    opts.Authorize,
		key:          opts.Key,
		retry:        orDefault(opts.Retry, DefaultRetry),
		heartbeat:    orDefault(opts.HeartbeatInterval, DefaultHeartbeatInterval),
		writeTimeout: orDefault(opts.WriteTimeout, DefaultWriteTimeout),
		parking:      !opts.WaitOnRequest,
		log:          opts.Logger,
		obs:          opts.Observer,
	}
	if h.key == nil {
		h.key = PathKey
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.closing, h.close = context.WithCancel(context.Background())
	h.hubs = make(map[replay.Key]*hub)
	return h, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Close ends every stream the Handler is serving, each after the frame it
// is writing, with the end of its chunked body (its client resumes
// elsewhere by Last-Event-ID), and answers every later request 503. It
// does not wait for the streams to end; Shutdown does.
// http.Server.Shutdown neither ends long responses nor knows the parked
// streams, whose connections the Handler took over: register Close with
// http.Server.RegisterOnShutdown. Close may be called more than once.
func (h *Handler) Close() { h.close() }

// Shutdown calls Close, then waits until every stream has ended (its last
// chunk written, its connection closed) or ctx ends, and returns ctx's
// error then. Call it after http.Server.Shutdown, so that the process
// exits only once the parked streams have ended too.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.Close()
	return h.drained.Wait(ctx, &h.mu, func() bool { return h.streams == 0 })
}

// begin counts a stream that starts, or reports false once closing.
func (h *Handler) begin() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing.Err() != nil {
		return false
	}
	h.streams++
	return true
}

// ended counts a stream that ended.
func (h *Handler) ended() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.streams--; h.streams == 0 {
		h.drained.Broadcast()
	}
}

// ServeHTTP answers one request for a turn's stream; see Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.closing.Err() != nil {
		writeBody(w, http.StatusServiceUnavailable, bodyClosed)
		return
	}
	key, err := h.key(r)
	if err != nil || !validKey(key) {
		writeBody(w, http.StatusNotFound, bodyNotFound)
		return
	}
	var rep streamReport
	r = rep.connect(h.obs, r, key)
	if err := h.authorize(r, key); err != nil {
		if code := refusal.CodeOf(err); code == refusal.CodeTurnNotFound || code == refusal.CodeUnauthorized {
			rep.refuse(refusal.CodeTurnNotFound, nil, 0, nil) // the code of the answer
			writeBody(w, http.StatusNotFound, bodyNotFound)
			return
		}
		rep.refuse(refusal.CodeStoreUnavailable, err, 0, nil)
		h.log.WarnContext(r.Context(), "stream: authorize failed", "err", err)
		writeBody(w, http.StatusServiceUnavailable, bodyUnavailable)
		return
	}
	cursor, err := cursorOf(r)
	if err != nil {
		e, _ := errors.AsType[*refusal.Error](err)
		rep.refuse(e.Code, nil, 0, nil)
		writeRefusal(w, http.StatusBadRequest, e.Code, e.Message, nil)
		return
	}
	b, frames, err := h.window.Read(r.Context(), key, cursor)
	if err != nil {
		switch code := refusal.CodeOf(err); code {
		case refusal.CodeStaleCursor:
			rep.refuse(code, nil, cursor, &b)
			writeRefusal(w, http.StatusGone, refusal.CodeStaleCursor, "the cursor is below the retained lower bound; start again from the turn's history", &b)
		case refusal.CodeCursorAhead:
			rep.refuse(code, nil, cursor, &b)
			writeRefusal(w, http.StatusConflict, refusal.CodeCursorAhead, "the cursor is beyond the latest seq", &b)
		default:
			if r.Context().Err() == nil {
				rep.refuse(refusal.CodeStoreUnavailable, err, cursor, nil)
				h.log.WarnContext(r.Context(), "stream: reading the window failed", "err", err)
				writeBody(w, http.StatusServiceUnavailable, bodyUnavailable)
			}
			rep.close(err) // the client went away
		}
		return
	}
	rep.resume(cursor, b)
	if b.Ended && cursor == b.Latest {
		rep.close(nil)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !h.begin() {
		rep.refuse(refusal.CodeStoreUnavailable, nil, 0, nil) // the Handler is shutting down
		writeBody(w, http.StatusServiceUnavailable, bodyClosed)
		return
	}
	h.serve(w, r, key, cursor, b, frames, &rep)
}

// cursorOf returns the request's resume cursor: the Last-Event-ID header,
// else the lastEventId query parameter, else 0.
func cursorOf(r *http.Request) (uint64, error) {
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
