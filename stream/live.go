package stream

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"time"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// sseFrame is the SSE frame of a stored frame: data its stored bytes, id
// its decimal seq, no event line (docs/contract.md section 10.1).
func sseFrame(f replay.Frame) sse.Frame {
	return sse.Frame{ID: strconv.FormatInt(f.Seq, 10), Data: f.Data}
}

// errGap is the delivery error of a window suffix that is not contiguous.
var errGap = errors.New("stream: gap in the window's suffix")

// contiguous reports whether f is the frame after cursor, and logs the
// window's broken rule when it is not: the stream then ends rather than
// skip or repeat a frame.
func (h *Handler) contiguous(ctx context.Context, cursor int64, f replay.Frame) bool {
	if f.Seq == cursor+1 {
		return true
	}
	h.log.ErrorContext(ctx, "stream: the window's suffix is not contiguous", "after", cursor, "seq", f.Seq)
	return false
}

// serve writes the event stream on the request's goroutine: the opening
// frame, the page Read returned after cursor with bounds b, the rest of
// the suffix page by page, then the frames as they come, until the turn
// ends. Once caught up, it parks the stream (see Handler) when the
// connection can be taken over, and else waits on this goroutine. A stream
// that ends for any other reason than its turn's end (or its client
// leaving) is aborted with http.ErrAbortHandler, after the deferred calls.
// The stream was counted by begin; it is counted out here, unless it was
// handed to a subscriber, which does it.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, key replay.Key, cursor int64, b replay.Bounds, frames []replay.Frame, rep *streamReport) {
	handedOff, clean := false, false
	var failed error // the write that ended the stream, for rep
	defer func() {
		rep.close(failed)
		if handedOff {
			return
		}
		h.streams.End()
		if !clean && r.Context().Err() == nil {
			panic(http.ErrAbortHandler) // never a clean end of body: the client resumes
		}
	}()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	defer context.AfterFunc(h.closing, cancel)()
	rc := http.NewResponseController(w)
	deadline := func() {
		if h.writeTimeout > 0 {
			rc.SetWriteDeadline(time.Now().Add(h.writeTimeout)) // http.ErrNotSupported: no deadline to set
		}
	}
	deadline()
	parkable := h.parking && r.Method == http.MethodGet && takesOver(w, r)
	if parkable && !b.Ended {
		// A parked stream ends by closing its connection: a client must not
		// send its next request (a POST, which it would not retry) on it.
		w.Header().Set("Connection", "close")
	}
	sw, err := sse.NewWriter(ctx, w, nil) // heartbeats come from this loop: no goroutine of their own
	if err != nil {
		h.log.WarnContext(ctx, "stream: opening the response failed", "err", err)
		return
	}
	defer sw.Close()
	if r.Method == http.MethodHead {
		clean = true
		return // the headers only
	}
	if sw.Send(sse.Frame{Event: sse.EventHeartbeat, Data: heartbeatData(time.Now()), Retry: h.retry}) != nil {
		return
	}
	beat := func() error {
		deadline()
		return sw.Comment(heartbeatComment)
	}
	for {
		if len(frames) == 0 && cursor < b.Latest {
			h.log.ErrorContext(ctx, "stream: the window returned no frame below its latest", "after", cursor, "latest", b.Latest)
			failed = errGap
			return
		}
		wrote := rep.write(frames)
		for _, f := range frames {
			if !h.contiguous(ctx, cursor, f) {
				rep.deliver(wrote, frames, errGap)
				return
			}
			deadline()
			if err := sw.Send(sseFrame(f)); err != nil {
				if errors.Is(err, refusal.ErrInvalidFrame) {
					h.log.ErrorContext(ctx, "stream: a stored frame cannot be written", "seq", f.Seq, "err", err)
				}
				failed = err
				rep.deliver(wrote, frames, err)
				return
			}
			cursor = f.Seq
		}
		rep.deliver(wrote, frames, nil)
		if b.Ended && cursor >= b.Latest {
			clean = true
			return
		}
		if cursor >= b.Latest {
			if parkable {
				// sw writes nothing from here on (it has no heartbeat goroutine), so
				// the connection is the subscriber's alone; the bufio.ReadWriter
				// Hijack returns is dropped: every frame so far was flushed.
				if conn, _, err := rc.Hijack(); err == nil {
					handedOff = true
					h.run(&subscriber{conn: conn, key: key, cursor: cursor, rep: rep.handOver()}, false, nil)
					return
				}
				parkable = false // not on this connection: wait here
			}
			if err = h.tail.Wait(ctx, key, cursor, beat); err != nil {
				failed = err // a heartbeat that outlasted WriteTimeout drops the reader too
				return
			}
		}
		if b, frames, err = h.tail.Read(ctx, key, cursor, beat); err != nil {
			failed = err
			return
		}
	}
}

// takesOver reports whether the Handler may take r's connection over once
// its stream is idle: w is net/http's own ResponseWriter, under no
// middleware's wrapper (a wrapper may transform or count the body, which a
// write to the bare connection would bypass), and the response is an
// HTTP/1.1 chunked body, the framing the parked writes continue.
func takesOver(w http.ResponseWriter, r *http.Request) bool {
	if r.ProtoMajor != 1 || r.ProtoMinor < 1 {
		return false
	}
	t := reflect.TypeOf(w)
	return t.Kind() == reflect.Pointer && t.Elem().PkgPath() == "net/http" && t.Elem().Name() == "response"
}

// heartbeatComment is the text of the comment an idle stream sends.
const heartbeatComment = "heartbeat"

// heartbeatData is the data of a heartbeat event (sse.AppendHeartbeat):
// {"tsMs":N}. The opening frame is a heartbeat event, since a retry line
// needs a frame of fields (the sse package writes none on its own) and one
// of type heartbeat is what readers skip.
func heartbeatData(now time.Time) []byte {
	b := append(make([]byte, 0, 32), `{"tsMs":`...)
	return append(strconv.AppendInt(b, now.UnixMilli(), 10), '}')
}
