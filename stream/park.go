package stream

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/sse"
)

// subscriber is a stream whose connection the Handler took over: the
// connection, in the middle of a chunked response body, the turn and the
// seq of the last frame written. While parked it is held by its turn's hub
// and nothing else; when woken, by the one goroutine that runs it.
type subscriber struct {
	conn   net.Conn
	key    replay.Key
	cursor int64
	rep    streamReport
}

// hub is the set of a turn's parked subscribers and the one window wait
// that will wake them all: it waits for a frame after after, the cursor of
// the subscriber that parked first. Guarded by Handler.mu.
type hub struct {
	parked map[*subscriber]struct{}
	after  int64
}

// parking is the outcome of park.
type parking int

const (
	parked  parking = iota // held by the hub: the caller lets go
	behind                 // frames came since the caller read: run again
	closing                // the Handler is closing: end the stream
)

// maxChunk is the size of the buffer a woken subscriber writes in one
// go: frames are batched into chunks of about this size.
const maxChunk = 32 << 10

// park hands s to its turn's hub, starting one when the turn has none.
func (h *Handler) park(s *subscriber) parking {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing.Err() != nil {
		return closing
	}
	hb := h.hubs[s.key]
	if hb == nil {
		hb = &hub{parked: make(map[*subscriber]struct{}), after: s.cursor}
		h.hubs[s.key] = hb
		go h.watch(s.key, hb)
	} else if s.cursor < hb.after {
		return behind // the hub's wait would not wake it for the frames in between
	}
	hb.parked[s] = struct{}{}
	return parked
}

// watch waits once on the window for hb's turn, then wakes every parked
// subscriber: to write the new frames, or a heartbeat when the interval
// passed, or to be aborted when the window failed or the Handler is
// closing. The hub is gone then: the subscribers that park again start the
// next one.
func (h *Handler) watch(key replay.Key, hb *hub) {
	_, idle, err := h.tail.WaitOnce(h.closing, key, hb.after)
	h.mu.Lock()
	delete(h.hubs, key)
	woken := hb.parked
	hb.parked = nil
	h.mu.Unlock()
	failed := err != nil && !idle
	if failed && h.closing.Err() == nil {
		h.log.Warn("stream: waiting on the window failed", "after", hb.after, "err", err)
	}
	if failed {
		for s := range woken {
			go h.end(s, false)
		}
		return
	}
	w := newWake(h, len(woken))
	for s := range woken {
		go h.run(s, idle, w)
	}
}

// wake is the bound of the first Read of every subscriber one watch woke:
// one timer per turn and wake rather than one per subscriber. The last
// subscriber done with it stops the timer.
type wake struct {
	ctx    context.Context
	cancel context.CancelFunc
	left   atomic.Int64
}

// newWake returns the wake of n subscribers.
func newWake(h *Handler, n int) *wake {
	w := &wake{}
	w.ctx, w.cancel = h.tail.Bounded(h.closing)
	w.left.Store(int64(n))
	return w
}

// done releases one subscriber's hold on w.
func (w *wake) done() {
	if w.left.Add(-1) == 0 {
		w.cancel()
	}
}

// run writes a heartbeat first when beat, then what s's turn holds after
// its cursor, page by page, then parks s again, or ends the stream once
// the turn has ended. A Read that outlasts WindowTimeout sends a heartbeat
// and reads again; a write that fails or outlasts WriteTimeout drops the
// connection; a window failure or the Handler's Close aborts it.
// The first Read is bounded by w when there is one.
func (h *Handler) run(s *subscriber, beat bool, w *wake) {
	bp, _ := h.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer h.bufs.Put(bp)
	for {
		if beat {
			if err := h.heartbeatChunk(s, bp); err != nil {
				if w != nil {
					w.done()
				}
				s.rep.close(err) // a drop when the write outlasted WriteTimeout
				h.end(s, false)
				return
			}
		}
		var rctx context.Context
		cancel := context.CancelFunc(nil)
		if w != nil {
			rctx = w.ctx
		} else {
			rctx, cancel = h.tail.Bounded(h.closing)
		}
		b, frames, err := h.tail.Window.Read(rctx, s.key, s.cursor, h.tail.PageBytes)
		beat = err != nil && h.closing.Err() == nil && errors.Is(rctx.Err(), context.DeadlineExceeded)
		if w != nil {
			w.done()
			w = nil
		} else {
			cancel()
		}
		if beat {
			continue // the window stalls: a heartbeat, and read again
		}
		if err == nil && len(frames) == 0 && s.cursor < b.Latest {
			err = errGap
		}
		if err != nil {
			if h.closing.Err() == nil {
				h.log.Warn("stream: reading the window failed", "after", s.cursor, "err", err)
			}
			h.end(s, false)
			return
		}
		wrote := s.rep.write(frames)
		err = h.writeFrames(s, bp, frames)
		s.rep.deliver(wrote, frames, err)
		if err != nil {
			s.rep.close(err) // a drop when the write outlasted WriteTimeout
			h.end(s, false)
			return
		}
		switch {
		case b.Ended && s.cursor >= b.Latest:
			h.end(s, true)
			return
		case s.cursor < b.Latest:
			continue // the next page
		}
		switch h.park(s) {
		case parked:
			return
		case closing:
			h.end(s, false)
			return
		}
	}
}

// heartbeatChunk writes the heartbeat comment to s as one chunk.
func (h *Handler) heartbeatChunk(s *subscriber, bp *[]byte) error {
	buf := sse.AppendComment(beginChunk(*bp), heartbeatComment)
	buf, err := h.writeChunk(s, buf)
	*bp = buf
	return err
}

// writeFrames writes frames to s as chunks of the response body and moves
// s's cursor.
func (h *Handler) writeFrames(s *subscriber, bp *[]byte, frames []replay.Frame) error {
	buf := (*bp)[:0]
	for _, f := range frames {
		if !h.contiguous(h.closing, s.cursor, f) {
			return errGap
		}
		if len(buf) == 0 {
			buf = beginChunk(buf)
		}
		var err error
		if buf, err = sse.AppendFrame(buf, sseFrame(f)); err != nil {
			h.log.Error("stream: a stored frame cannot be written", "seq", f.Seq, "err", err)
			return err
		}
		s.cursor = f.Seq
		if len(buf) >= maxChunk {
			if buf, err = h.writeChunk(s, buf); err != nil {
				return err
			}
		}
	}
	var err error
	if len(buf) > 0 {
		buf, err = h.writeChunk(s, buf)
	}
	if cap(buf) <= 2*maxChunk {
		*bp = buf // a buffer grown for a large frame is not kept
	}
	return err
}

// chunkHead is the room beginChunk leaves for a chunk's size line: up to
// 14 hex digits and CRLF.
const chunkHead = 16

// beginChunk starts a chunk in dst: room for its size line.
func beginChunk(dst []byte) []byte {
	return append(dst[:0], make([]byte, chunkHead)...)
}

// writeChunk completes the chunk in buf (HTTP/1.1 chunked transfer coding:
// size in hex, CRLF, data, CRLF) and writes it in one call within
// WriteTimeout. It returns buf emptied.
func (h *Handler) writeChunk(s *subscriber, buf []byte) ([]byte, error) {
	size := len(buf) - chunkHead
	var head [chunkHead]byte
	line := append(strconv.AppendInt(head[:0], int64(size), 16), '\r', '\n')
	start := chunkHead - len(line)
	copy(buf[start:], line)
	buf = append(buf, '\r', '\n')
	err := h.write(s, buf[start:])
	return buf[:0], err
}

// write writes p to s's connection within WriteTimeout.
func (h *Handler) write(s *subscriber, p []byte) error {
	if h.writeTimeout > 0 {
		s.conn.SetWriteDeadline(time.Now().Add(h.writeTimeout))
	}
	_, err := s.conn.Write(p)
	return err
}

// lastChunk ends a chunked body.
const lastChunk = "0\r\n\r\n"

// end ends s's stream and closes its connection: with the last chunk when
// clean (the turn ended), else without it, so that the client sees a
// broken body and resumes (docs/contract.md section 14.2).
func (h *Handler) end(s *subscriber, clean bool) {
	if clean {
		h.write(s, []byte(lastChunk))
	}
	s.rep.close(nil) // a no-op when the end was reported already
	s.conn.Close()
	h.streams.End()
}
