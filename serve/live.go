package serve

import (
	"context"
	"errors"
	"net/http"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// heartbeat is the comment an idle stream sends (docs/contract.md section
// 10.1): every protocol's parser skips it.
var heartbeat = []byte(": heartbeat\n\n")

// serve writes s's stream on the request's goroutine: the headers, the
// prologue, the page Read returned with bounds b, the rest of the turn
// page by page, then its frames as they come, until its output ends. Once
// caught up, it parks s (see park) when the connection can be taken over,
// and else waits on this goroutine. A stream that ends for any other
// reason than its output's end (or its client leaving) is aborted with
// http.ErrAbortHandler, after the deferred calls. The stream was counted by
// begin; it is counted out here, unless it was parked, which does it.
func (e *Engine) serve(w http.ResponseWriter, r *http.Request, st *Stream, s *subscriber, b replay.Bounds, frames []replay.Frame) {
	handedOff, clean := false, false
	var failed error // the write that ended the stream, for the report
	defer func() {
		if handedOff {
			return
		}
		s.rep.close(failed)
		s.out.leave(e)
		e.end()
		if !clean && r.Context().Err() != nil && st.Gone != nil {
			st.Gone()
		}
		if !clean && r.Context().Err() == nil {
			panic(http.ErrAbortHandler) // never a clean end of body: the client resumes
		}
	}()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(e.closing, cancel)()
	h := w.Header()
	for name, values := range st.Header {
		h[name] = values
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	h.Del("Transfer-Encoding") // net/http's own chunks, which parked writes continue
	// A parked stream would learn of its client's leaving at its next write.
	parkable := e.set.parking && st.Gone == nil && takesOver(w, r)
	// Before the headers: net/http closes the body once they are written,
	// whether it read it to its end or not.
	keep := parkable && reusable(w, r)
	w.WriteHeader(http.StatusOK)
	out := &response{w: w, rc: http.NewResponseController(w), timeout: e.set.write}
	if r.Method == http.MethodHead {
		clean = out.write(nil) == nil // the headers only
		return
	}
	if failed = out.write(st.Prologue); failed != nil {
		return
	}
	beat := func() error { return out.write(heartbeat) }
	var buf []byte
	for {
		if len(frames) == 0 && s.cursor < b.Latest {
			e.set.log.ErrorContext(ctx, "serve: the window returned no frame below its latest", "after", s.cursor, "latest", b.Latest)
			failed = errGap
			return
		}
		wrote := s.rep.write(frames)
		buf, failed = e.appendFrames(ctx, s, buf[:0], frames, nil)
		if failed == nil {
			if s.out.finished(b, s.cursor) {
				buf = append(buf, st.Epilogue...)
			}
			failed = out.write(buf)
		}
		s.rep.deliver(wrote, frames, failed)
		if failed != nil {
			return
		}
		if cap(buf) > 2*maxChunk {
			buf = nil // a buffer grown for a large frame is not kept
		}
		switch {
		case s.out.finished(b, s.cursor):
			clean = true
			return
		case b.Ended && s.cursor >= b.Latest:
			// A turn that ended without an output that ends the stream (a
			// Codec's bug): an abort tells the client it is incomplete.
			e.set.log.ErrorContext(ctx, "serve: the turn ended but its output did not", "seq", s.cursor)
			return
		}
		if s.cursor >= b.Latest {
			if parkable && !encoded(w.Header()) {
				// Nothing writes to w from here on, so the connection is the
				// parked stream's alone; the bufio.ReadWriter Hijack returns
				// is dropped: every write so far was flushed, and what the
				// client sent beyond r (a pipelined request) is only ever
				// lost with the connection, which is then not given back:
				// the client retries what it was not answered.
				if conn, rw, err := out.rc.Hijack(); err == nil {
					handedOff = true
					s.conn, s.epilogue, s.rep = conn, st.Epilogue, s.rep.handOver()
					if keep && rw != nil && rw.Reader != nil && rw.Reader.Buffered() == 0 {
						s.server, _ = r.Context().Value(http.ServerContextKey).(*http.Server)
					}
					e.run(s, false, nil)
					return
				}
				parkable = false // not on this connection: wait here
			}
			if failed = e.wait(ctx, s.key, s.cursor, beat); failed != nil {
				return // a heartbeat that outlasted WriteTimeout drops the reader too
			}
		}
		if b, frames, failed = e.read(ctx, s.key, s.cursor, beat); failed != nil {
			return
		}
	}
}

// appendFrames appends the output of frames, the frames after s's cursor,
// to dst and moves the cursor, up to the frame whose output ends the
// stream. When spill is not nil, it is handed dst each time dst holds
// maxChunk bytes or more, and returns it emptied.
func (e *Engine) appendFrames(ctx context.Context, s *subscriber, dst []byte, frames []replay.Frame, spill func([]byte) ([]byte, error)) ([]byte, error) {
	for _, f := range frames {
		if f.Seq != s.cursor+1 {
			e.set.log.ErrorContext(ctx, "serve: the window's suffix is not contiguous", "after", s.cursor, "seq", f.Seq)
			return dst, errGap
		}
		var err error
		if dst, err = s.out.appendFrame(ctx, e, s.key, dst, f); err != nil {
			if errors.Is(err, refusal.ErrInvalidFrame) {
				e.set.log.ErrorContext(ctx, "serve: a stored frame cannot be written", "seq", f.Seq, "err", err)
			} else if ctx.Err() == nil {
				e.set.log.ErrorContext(ctx, "serve: transcoding failed", "seq", f.Seq, "err", err)
			}
			return dst, err
		}
		s.cursor = f.Seq
		if s.out.done {
			break
		}
		if spill != nil && len(dst) >= maxChunk {
			if dst, err = spill(dst); err != nil {
				return dst, err
			}
		}
	}
	return dst, nil
}
