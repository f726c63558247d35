package serve

import (
	"errors"
	"net/http"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// Stream is what one response serves: a turn's frames after Cursor, as
// stored (NewCodec nil: the version-1 stream) or transcoded by the Codecs
// NewCodec makes, shared by the streams of the turn under the same
// Variant, with Header added to the response's headers and Prologue and
// Epilogue written before the first frame and after the output that ends
// the stream.
type Stream struct {
	// Key is the turn.
	Key replay.Key
	// Cursor is the seq after which the stream starts, 0 for the whole
	// turn; a stream through a Codec starts at 0.
	Cursor int64
	// CursorOf, when set, reads Cursor from the request once Authorize
	// allowed it (the version-1 stream's Last-Event-ID); a [*refusal.Error]
	// it returns is answered with its code and message.
	CursorOf func(r *http.Request) (int64, error)
	// Authorize, when set, decides whether r may read Key's turn before
	// the window is read, within [Options.WindowTimeout]: nil allows, an
	// error of code turn-not-found or unauthorized is answered 404
	// turn-not-found alike, any other error 503 (section 14.3).
	Authorize func(r *http.Request, key replay.Key) error
	// NewCodec makes the Codec of the stream's protocol; nil writes the
	// stored frames as they are, each with its seq as its id (section
	// 10.1).
	NewCodec func() Codec
	// Variant names the Codec's output among the streams of the turn: the
	// streams whose output is the same share it.
	Variant string
	// Resume answers 204 for a turn that has ended (a resume finds nothing
	// to resume), before any other answer.
	Resume bool
	// Header holds headers the response carries besides those of an event
	// stream.
	Header http.Header
	// Prologue is written before the first frame, Epilogue after the
	// output that ends the stream.
	Prologue, Epilogue []byte
	// Gone, when set, is called once, on the request's goroutine before
	// Serve returns, when the client went away (the request's context
	// ended) after Serve began to read the window and before the output
	// that ends the stream: never for the Engine's Close, a window failure
	// or a slow reader's drop. A stream with Gone is never parked, so
	// that it learns of its client's leaving at once, not at its next
	// write. The agui bridge cancels its run's turn so (docs/contract.md
	// section 18.2); the version-1 and UI streams set none: their clients
	// resume.
	Gone func()
}

// The Engine's words for the codes it answers (docs/contract.md section
// 14.3); an unknown turn and a caller without rights get the same bytes.
const (
	msgNotFound    = "no such turn"
	msgUnavailable = "the stream is unavailable; retry later"
	msgClosed      = "the server is shutting down; retry later"
	msgStale       = "the cursor is below the retained lower bound; start again from the turn's history"
	msgAhead       = "the cursor is beyond the latest seq"
	msgNoFlush     = "the response cannot be flushed, so it cannot carry a stream"
)

// Serve answers r with st (docs/contract.md sections 14.3 and 18.3): 503
// store-unavailable with Retry-After once the Engine is closing or when
// Authorize or the window fails or exceeds [Options.WindowTimeout]; 404
// turn-not-found when Authorize denies; 204 for a resume of an ended turn,
// or when the cursor is the latest seq of an ended turn; 410 stale-cursor
// and 409 cursor-ahead with the window's bounds; 500 internal when w cannot
// flush (a middleware that buffers, such as [net/http.TimeoutHandler]),
// before any byte of a body. Otherwise it streams: 200, the event-stream
// headers and st.Header, the prologue, the output of every frame after
// st.Cursor, live until the turn's output ends, then the epilogue. A
// stream that ends otherwise while its client is there (Close, a window
// failure, a write that outlasted WriteTimeout) is aborted, never ended
// cleanly (section 14.2): on the request's goroutine with a panic of
// [net/http.ErrAbortHandler], which a middleware that recovers panics must
// let through, and once parked by closing the connection without the last
// chunk. A HEAD request gets the headers only.
func (e *Engine) Serve(w http.ResponseWriter, r *http.Request, st *Stream) {
	if e.Closed() {
		e.Unavailable(w, msgClosed)
		return
	}
	var rep report
	r = rep.connect(e.set.obs, r, st.Key)
	ctx, cancel := e.Bounded(r.Context())
	defer cancel()
	if st.Authorize != nil {
		if err := st.Authorize(r.WithContext(ctx), st.Key); err != nil {
			if code := refusal.CodeOf(err); code == refusal.CodeTurnNotFound || code == refusal.CodeUnauthorized {
				rep.refuse(refusal.CodeTurnNotFound, nil, 0, nil) // the code of the answer
				Refuse(w, refusal.CodeTurnNotFound, msgNotFound)
				return
			}
			rep.refuse(refusal.CodeStoreUnavailable, err, 0, nil)
			e.set.log.WarnContext(r.Context(), "serve: authorize failed", "err", err)
			e.Unavailable(w, msgUnavailable)
			return
		}
	}
	cursor := st.Cursor
	if st.CursorOf != nil {
		c, err := st.CursorOf(r)
		if err != nil {
			re, ok := errors.AsType[*refusal.Error](err)
			if !ok {
				re = &refusal.Error{Code: refusal.CodeInvalidCursor, Message: "the cursor is not one"}
			}
			rep.refuse(re.Code, nil, 0, nil)
			Refuse(w, re.Code, re.Message) // the reader's own fixed words, never the input
			return
		}
		cursor = c
	}
	b, frames, err := e.window.Read(ctx, st.Key, cursor, e.set.page)
	var stale bool
	if ce, ok := errors.AsType[*replay.CursorError](err); ok {
		b, stale = ce.Bounds, refusal.CodeOf(err) == refusal.CodeStaleCursor
		if stale || refusal.CodeOf(err) == refusal.CodeCursorAhead {
			err = nil // answered below with the bounds
		}
	}
	switch {
	case err != nil:
		if r.Context().Err() == nil {
			rep.refuse(refusal.CodeStoreUnavailable, err, cursor, nil)
			e.set.log.WarnContext(r.Context(), "serve: reading the window failed", "err", err)
			e.Unavailable(w, msgUnavailable)
		}
		if r.Context().Err() != nil && st.Gone != nil {
			st.Gone()
		}
		rep.close(err) // the client went away
		return
	case st.Resume && b.Ended:
		rep.close(nil)
		w.WriteHeader(http.StatusNoContent)
		return
	case stale || b.Lower > cursor:
		rep.refuse(refusal.CodeStaleCursor, nil, cursor, &b)
		RefuseBounds(w, refusal.CodeStaleCursor, msgStale, b)
		return
	case cursor > b.Latest:
		rep.refuse(refusal.CodeCursorAhead, nil, cursor, &b)
		RefuseBounds(w, refusal.CodeCursorAhead, msgAhead, b)
		return
	}
	cancel()
	rep.resume(cursor, b)
	if b.Ended && cursor == b.Latest {
		rep.close(nil)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if !flushes(w) {
		rep.refuse(refusal.CodeInternal, nil, cursor, nil)
		e.set.log.ErrorContext(r.Context(), "serve: the ResponseWriter cannot flush: a stream needs a writer that offers http.Flusher or Unwrap")
		Refuse(w, refusal.CodeInternal, msgNoFlush)
		return
	}
	if !e.begin() {
		rep.refuse(refusal.CodeStoreUnavailable, nil, 0, nil) // the Engine is shutting down
		e.Unavailable(w, msgClosed)
		return
	}
	s := &subscriber{key: st.Key, cursor: cursor, out: output{newCodec: st.NewCodec, variant: st.Variant}, rep: rep}
	if st.NewCodec != nil {
		s.out.shared = e.cache.acquire(st.Key, st.Variant, st.NewCodec, false)
	}
	e.serve(w, r, st, s, b, frames)
}
