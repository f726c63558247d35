package stream

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// sseFrame is the SSE frame of a stored frame: id its decimal seq, event
// its type, data its stored bytes (docs/contract.md section 10).
func sseFrame(f replay.Frame) sse.Frame {
	return sse.Frame{ID: strconv.FormatUint(f.Seq, 10), Event: f.Type, Data: f.Data}
}

// errGap is the delivery error of a window suffix that is not contiguous.
var errGap = errors.New("stream: gap in the window's suffix")

// contiguous reports whether f is the frame after cursor, and logs the
// window's broken rule when it is not: the stream then ends rather than
// skip or repeat a frame.
func (h *Handler) contiguous(ctx context.Context, cursor uint64, f replay.Frame) bool {
	if f.Seq == cursor+1 {
		return true
	}
	h.log.ErrorContext(ctx, "stream: the window's suffix is not contiguous", "after", cursor, "seq", f.Seq)
	return false
}

// serve writes the event stream on the request's goroutine: the opening
// frame, the frames Read returned after cursor with bounds b, then the
// frames as they come, until the turn ends. Once caught up, it parks the
// stream (see Handler) when the connection can be taken over, and else
// waits on this goroutine. The stream was counted by begin; it is counted
// out here, unless it was handed to a subscriber, which does it.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, key replay.Key, cursor uint64, b replay.Bounds, frames []replay.Frame, rep *streamReport) {
	handedOff := false
	var failed error // the write that ended the stream, for rep
	defer func() {
		rep.close(failed)
		if !handedOff {
			h.ended()
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
	sw, err := sse.NewWriter(ctx, w, nil) // heartbeats come from this loop: no goroutine of their own
	if err != nil {
		h.log.WarnContext(ctx, "stream: opening the response failed", "err", err)
		return
	}
	defer sw.Close()
	if r.Method == http.MethodHead {
		return // the headers only (a GET pattern also matches HEAD)
	}
	if sw.Send(sse.Frame{Event: sse.EventHeartbeat, Data: heartbeatData(time.Now()), Retry: h.retry}) != nil {
		return
	}
	parkable := h.parking && r.ProtoMajor == 1 && r.Method == http.MethodGet
	for {
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
			return
		}
		if parkable {
			// sw writes nothing from here on (it has no heartbeat goroutine), so
			// the connection is the subscriber's alone; the bufio.ReadWriter
			// Hijack returns is dropped: every frame so far was flushed.
			if conn, _, err := rc.Hijack(); err == nil {
				handedOff = true
				h.run(&subscriber{conn: conn, key: key, cursor: cursor, rep: rep.handOver()}, false)
				return
			}
			parkable = false // not on this connection: wait here
		}
		if b, err = h.wait(ctx, key, cursor, sw, deadline); err != nil {
			failed = err // a heartbeat that outlasted WriteTimeout drops the reader too
			return
		}
		if b, frames, err = h.window.Read(ctx, key, cursor); err != nil {
			if ctx.Err() == nil {
				h.log.WarnContext(ctx, "stream: reading the window failed", "after", cursor, "err", err)
			}
			return
		}
	}
}

// wait waits for a frame after cursor, or the end of the turn, sending a
// heartbeat each time HeartbeatInterval passes without one. It returns the
// window's error, ctx's, or the error of a heartbeat.
func (h *Handler) wait(ctx context.Context, key replay.Key, cursor uint64, sw *sse.Writer, deadline func()) (replay.Bounds, error) {
	for {
		b, idle, err := h.waitOnce(ctx, key, cursor)
		if !idle {
			if err != nil && ctx.Err() == nil {
				h.log.WarnContext(ctx, "stream: waiting on the window failed", "after", cursor, "err", err)
			}
			return b, err
		}
		deadline()
		if err := sw.Comment(heartbeatComment); err != nil {
			return b, err
		}
	}
}

// waitOnce waits on the window at most HeartbeatInterval. idle reports
// that the interval passed with nothing to tell.
func (h *Handler) waitOnce(ctx context.Context, key replay.Key, cursor uint64) (b replay.Bounds, idle bool, err error) {
	wctx, cancel := ctx, context.CancelFunc(func() {})
	if h.heartbeat > 0 {
		wctx, cancel = context.WithTimeout(ctx, h.heartbeat)
	}
	defer cancel()
	b, err = h.window.Wait(wctx, key, cursor)
	idle = err != nil && ctx.Err() == nil && errors.Is(wctx.Err(), context.DeadlineExceeded)
	return b, idle, err
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
