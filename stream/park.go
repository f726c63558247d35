package stream

import (
	"net"
	"strconv"
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
	cursor uint64
	rep    streamReport
}

// hub is the set of a turn's parked subscribers and the one window wait
// that will wake them all: it waits for a frame after after, the cursor of
// the subscriber that parked first. Guarded by Handler.mu.
type hub struct {
	parked map[*subscriber]struct{}
	after  uint64
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
// passed, or to end when the window failed or the Handler is closing. The
// hub is gone then: the subscribers that park again start the next one.
func (h *Handler) watch(key replay.Key, hb *hub) {
	_, idle, err := h.waitOnce(h.closing, key, hb.after)
	h.mu.Lock()
	delete(h.hubs, key)
	woken := hb.parked
	hb.parked = nil
	h.mu.Unlock()
	failed := err != nil && !idle
	if failed && h.closing.Err() == nil {
		h.log.Warn("stream: waiting on the window failed", "after", hb.after, "err", err)
	}
	for s := range woken {
		if failed {
			go h.end(s)
		} else {
			go h.run(s, idle)
		}
	}
}

// run writes what s's turn holds after its cursor, or a heartbeat when beat
// and there is nothing, then parks s again, or ends the stream once the
// turn has ended. A write that fails or outlasts WriteTimeout drops the
// connection.
func (h *Handler) run(s *subscriber, beat bool) {
	bp, _ := h.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer h.bufs.Put(bp)
	for {
		b, frames, err := h.window.Read(h.closing, s.key, s.cursor)
		if err != nil {
			if h.closing.Err() == nil {
				h.log.Warn("stream: reading the window failed", "after", s.cursor, "err", err)
			}
			h.end(s)
			return
		}
		wrote := s.rep.write(frames)
		err = h.writeFrames(s, bp, frames, beat)
		s.rep.deliver(wrote, frames, err)
		if err != nil {
			s.rep.close(err) // a drop when the write outlasted WriteTimeout
			h.drop(s)
			return
		}
		if b.Ended && s.cursor >= b.Latest {
			h.end(s)
			return
		}
		switch h.park(s) {
		case parked:
			return
		case closing:
			h.end(s)
			return
		}
		beat = false
	}
}

// writeFrames writes frames to s as chunks of the response body, or a
// heartbeat when there is none and beat, and moves s's cursor.
func (h *Handler) writeFrames(s *subscriber, bp *[]byte, frames []replay.Frame, beat bool) error {
	buf := (*bp)[:0]
	if len(frames) == 0 && beat {
		buf = sse.AppendComment(beginChunk(buf), heartbeatComment)
	}
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

// end ends s's response with the last chunk and closes its connection.
func (h *Handler) end(s *subscriber) {
	h.write(s, []byte(lastChunk))
	h.drop(s)
}

// drop closes s's connection: the stream has ended.
func (h *Handler) drop(s *subscriber) {
	s.rep.close(nil) // a no-op when the end was reported already
	s.conn.Close()
	h.ended()
}
