package stream

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/sse"
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

	// Options are the serving options every stream of the module shares:
	// the reconnection delay (sent with a retry line), heartbeats,
	// timeouts, page size, parking, logger and observer.
	serve.Options
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
// answers are those of section 14.3 and [serve.Engine.Serve], each refusal
// with a [refusal.Body] and the status of section 12.5; 400
// invalid-cursor for a Last-Event-ID that is not a cursor ([ParseCursor]).
//
// Frames are written as stored (section 10.1), after an opening heartbeat
// event that carries the retry line. Streams are served by a
// [serve.Engine]: a stream that ends before its turn did is aborted, never
// ended cleanly, and a caught-up stream parks without a goroutine of its
// own under net/http's own ResponseWriter over HTTP/1.1. A Handler is safe
// for concurrent use; make one with [NewHandler].
type Handler struct {
	engine    *serve.Engine
	authorize func(*http.Request, replay.Key) error
	key       func(*http.Request) (replay.Key, error)
	retry     time.Duration
}

// NewHandler returns a Handler serving turns from window. It fails when
// window or opts.Authorize is nil, or when an option is out of range (a
// negative Retry).
func NewHandler(window replay.Window, opts *HandlerOptions) (*Handler, error) {
	if opts == nil || opts.Authorize == nil {
		return nil, errors.New("stream: NewHandler needs HandlerOptions.Authorize")
	}
	engine, err := serve.NewEngine(window, &opts.Options)
	if err != nil {
		return nil, err
	}
	h := &Handler{engine: engine, authorize: opts.Authorize, key: opts.Key, retry: opts.Retry}
	if h.retry == 0 {
		h.retry = serve.DefaultRetry
	}
	if h.key == nil {
		h.key = PathKey
	}
	return h, nil
}

// Close aborts every stream the Handler is serving, each after the write
// it is making, so that its client resumes elsewhere by Last-Event-ID, and
// answers every later request 503. It does not wait for the streams to
// end; Shutdown does. [http.Server.Shutdown] neither ends long responses
// nor knows the parked streams, whose connections the Handler took over:
// register Close with [http.Server.RegisterOnShutdown]. Close may be
// called more than once.
func (h *Handler) Close() { h.engine.Close() }

// Shutdown calls Close, then waits until every stream has ended (its last
// chunk written, its connection closed) or ctx ends, and returns ctx's
// error then. Call it after [http.Server.Shutdown], so that the process
// exits only once the parked streams have ended too.
func (h *Handler) Shutdown(ctx context.Context) error { return h.engine.Shutdown(ctx) }

// The Handler's words for the refusals it answers itself.
const (
	msgNotFound = "no such turn"
	msgMethod   = "a stream is read with GET"
)

// ServeHTTP answers one request for a turn's stream; see Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		serve.Refuse(w, refusal.CodeMethodNotAllowed, msgMethod)
		return
	}
	key, err := h.key(r)
	if err != nil || !validKey(key) {
		serve.Refuse(w, refusal.CodeTurnNotFound, msgNotFound)
		return
	}
	h.engine.Serve(w, r, &serve.Stream{Key: key, CursorOf: cursorOf, Authorize: h.authorize, Prologue: h.opening(time.Now())})
}

// opening is the frame a stream opens with: a heartbeat event carrying the
// retry line, since a retry line needs a frame of fields and one of type
// heartbeat is what readers skip. Its data is {"tsMs":N}.
func (h *Handler) opening(now time.Time) []byte {
	data := append(make([]byte, 0, 32), `{"tsMs":`...)
	data = append(strconv.AppendInt(data, now.UnixMilli(), 10), '}')
	b, _ := sse.AppendFrame(nil, sse.Frame{Event: sse.EventHeartbeat, Data: data, Retry: h.retry}) // fields of our own: never refused
	return b
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
