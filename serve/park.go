package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// subscriber is one stream: its turn, the seq of the last frame it got, its
// output and its report; once parked, also the connection the Engine took
// over, in the middle of a chunked response body, and the epilogue. While
// parked it is held by its turn's hub and nothing else; when woken, by the
// one goroutine that runs it.
type subscriber struct {
	key      replay.Key
	cursor   int64
	out      output
	rep      report
	conn     net.Conn
	server   *http.Server // the server that accepted conn, which gets it back after a clean end
	epilogue []byte
}

// hub is the set of a turn's parked streams and the one window wait that
// will wake them all: it waits for a frame after after, the cursor of the
// stream that parked first. Guarded by Engine.hubMu.
type hub struct {
	parked map[*subscriber]struct{}
	after  int64
}

// parking is the outcome of park.
type parking int

const (
	parked  parking = iota // held by the hub: the caller lets go
	behind                 // frames came since the caller read: run again
	closing                // the Engine is closing: end the stream
)

// park hands s to its turn's hub, starting one when the turn has none.
func (e *Engine) park(s *subscriber) parking {
	e.hubMu.Lock()
	defer e.hubMu.Unlock()
	if e.closing.Err() != nil {
		return closing
	}
	hb := e.hubs[s.key]
	if hb == nil {
		hb = &hub{parked: make(map[*subscriber]struct{}), after: s.cursor}
		e.hubs[s.key] = hb
		go e.watch(s.key, hb)
	} else if s.cursor < hb.after {
		return behind // the hub's wait would not wake it for the frames in between
	}
	hb.parked[s] = struct{}{}
	return parked
}

// watch waits once on the window for hb's turn, then wakes every parked
// stream: to write the new frames, or a heartbeat when the interval passed,
// or to be aborted when the window failed or the Engine is closing. The hub
// is gone then: the streams that park again start the next one.
func (e *Engine) watch(key replay.Key, hb *hub) {
	idle, err := e.waitOnce(e.closing, key, hb.after)
	e.hubMu.Lock()
	delete(e.hubs, key)
	woken := hb.parked
	hb.parked = nil
	e.hubMu.Unlock()
	failed := err != nil && !idle
	if failed && e.closing.Err() == nil {
		e.set.log.Warn("serve: waiting on the window failed", "after", hb.after, "err", err)
	}
	if failed {
		for s := range woken {
			go e.finish(s, false)
		}
		return
	}
	w := e.newWake(len(woken))
	for s := range woken {
		go e.run(s, idle, w)
	}
}

// wake is the bound of the first Read of every stream one watch woke: one
// timer per turn and wake rather than one per stream. It ends after the
// shorter of WindowTimeout and HeartbeatInterval, so that a stalled window
// still gets its heartbeat on time; the last stream done with it stops it.
type wake struct {
	ctx    context.Context
	cancel context.CancelFunc
	left   atomic.Int64
}

// newWake returns the wake of n streams.
func (e *Engine) newWake(n int) *wake {
	w := &wake{}
	bound := e.set.window
	if e.set.heartbeat > 0 && (bound <= 0 || e.set.heartbeat < bound) {
		bound = e.set.heartbeat
	}
	if bound > 0 {
		w.ctx, w.cancel = context.WithTimeout(e.closing, bound)
	} else {
		w.ctx, w.cancel = context.WithCancel(e.closing)
	}
	w.left.Store(int64(n))
	return w
}

// done releases one stream's hold on w.
func (w *wake) done() {
	if w.left.Add(-1) == 0 {
		w.cancel()
	}
}

// run writes a heartbeat first when beat, then what s's turn holds after
// its cursor, page by page, then parks s again, or ends the stream once its
// output ended. A Read that stalls sends heartbeats and reads again; a
// write that fails or outlasts WriteTimeout drops the connection; a window
// failure or the Engine's Close aborts it. The first Read is bounded by w
// when there is one.
func (e *Engine) run(s *subscriber, beat bool, w *wake) {
	bp, _ := e.bufs.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	defer e.bufs.Put(bp)
	heartbeatChunk := func() error {
		_, err := writeChunk(s.conn, e.set.write, append(beginChunk(nil), heartbeat...))
		return err
	}
	for {
		if beat {
			if err := heartbeatChunk(); err != nil {
				if w != nil {
					w.done()
				}
				s.rep.close(err) // a drop when the write outlasted WriteTimeout
				e.finish(s, false)
				return
			}
		}
		var b replay.Bounds
		var frames []replay.Frame
		var err error
		if w != nil {
			b, frames, err = e.window.Read(w.ctx, s.key, s.cursor, e.set.page)
			stalled := err != nil && e.closing.Err() == nil && errors.Is(w.ctx.Err(), context.DeadlineExceeded)
			w.done()
			w = nil
			if stalled {
				beat = true
				continue // a heartbeat, and read again, with one on time while it stalls
			}
		} else {
			b, frames, err = e.read(e.closing, s.key, s.cursor, heartbeatChunk)
		}
		beat = false
		if err == nil && len(frames) == 0 && s.cursor < b.Latest {
			err = errGap
		}
		if err != nil {
			if e.closing.Err() == nil && !errors.Is(err, errGap) {
				e.set.log.Warn("serve: reading the window failed", "after", s.cursor, "err", err)
			}
			s.rep.close(err)
			e.finish(s, false)
			return
		}
		wrote := s.rep.write(frames)
		err = e.writeFrames(s, bp, frames, b)
		s.rep.deliver(wrote, frames, err)
		if err != nil {
			s.rep.close(err) // a drop when the write outlasted WriteTimeout
			e.finish(s, false)
			return
		}
		switch {
		case s.out.finished(b, s.cursor):
			e.finish(s, true)
			return
		case b.Ended && s.cursor >= b.Latest:
			e.set.log.Error("serve: the turn ended but its output did not", "seq", s.cursor)
			e.finish(s, false)
			return
		case s.cursor < b.Latest:
			continue // the next page
		}
		switch e.park(s) {
		case parked:
			return
		case closing:
			e.finish(s, false)
			return
		}
	}
}

// writeFrames writes the output of frames to s as chunks of the response
// body, with the epilogue when it ends the stream, and moves s's cursor.
func (e *Engine) writeFrames(s *subscriber, bp *[]byte, frames []replay.Frame, b replay.Bounds) error {
	spill := func(buf []byte) ([]byte, error) {
		buf, err := writeChunk(s.conn, e.set.write, buf)
		return beginChunk(buf), err
	}
	buf, err := e.appendFrames(e.closing, s, beginChunk(*bp), frames, spill)
	if err == nil && s.out.finished(b, s.cursor) {
		buf = append(buf, s.epilogue...)
	}
	if err == nil {
		buf, err = writeChunk(s.conn, e.set.write, buf)
	}
	if cap(buf) <= 2*maxChunk {
		*bp = buf // a buffer grown for a large frame is not kept
	}
	return err
}

// finish ends s's stream: when clean (its output ended) with the last
// chunk, after which the connection goes back to the server that accepted
// it for the client's next request, as if it had never been taken over;
// else by closing the connection without the last chunk, so that the
// client sees a broken body and resumes (docs/contract.md section 14.2).
func (e *Engine) finish(s *subscriber, clean bool) {
	if clean && writeConn(s.conn, e.set.write, []byte(lastChunk)) == nil && s.server != nil && e.closing.Err() == nil {
		s.conn.SetWriteDeadline(time.Time{})
		giveBack(s.server, s.conn)
	} else {
		s.conn.Close()
	}
	s.rep.close(nil) // a no-op when the end was reported already
	s.out.leave(e)
	e.end()
}

// giveBack hands conn to srv, which serves its next requests as those of
// a connection it accepted, or closes it when srv is shutting down. It
// returns once srv holds conn (its ConnState hook saw it new) or closed it,
// so that a stream is counted out only after its connection is the
// server's: a host that waits for Shutdown, then closes its server, cannot
// miss it.
func giveBack(srv *http.Server, conn net.Conn) {
	l := &oneConn{conn: conn, held: make(chan struct{})}
	go func() {
		if srv.Serve(l); !l.taken {
			conn.Close() // the server was shutting down: it took nothing
		}
		l.release()
	}()
	<-l.held
}

// oneConn is a net.Listener that accepts conn once, then reports itself
// closed, so that http.Server.Serve returns after handing conn to its own
// goroutine. Serve's second Accept, or its return, closes held.
type oneConn struct {
	conn  net.Conn
	taken bool // read and written by Serve's goroutine only
	held  chan struct{}
	once  sync.Once
}

func (l *oneConn) Accept() (net.Conn, error) {
	if l.taken {
		l.release() // Serve set conn's state and started serving it
		return nil, net.ErrClosed
	}
	l.taken = true
	return l.conn, nil
}

func (l *oneConn) release()       { l.once.Do(func() { close(l.held) }) }
func (l *oneConn) Close() error   { return nil }
func (l *oneConn) Addr() net.Addr { return l.conn.LocalAddr() }
