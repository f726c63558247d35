package sse

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/Papercusp/chat-protocol-go/internal/ticker"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// WriterOptions configures a Writer. The zero value (or a nil pointer) means
// no heartbeats.
type WriterOptions struct {
	// HeartbeatInterval is the time between two heartbeat frames (see
	// [AppendHeartbeat]), sent on a ticker from the Writer's own goroutine
	// whatever else is written. 0 or negative means no heartbeats.
	HeartbeatInterval time.Duration
}

// Writer writes an event stream as an HTTP response (docs/contract.md
// section 10): it sets the event-stream headers, then writes each frame
// whole and flushes it through [http.ResponseController], so the client sees
// every frame as soon as it is sent.
//
// Send, Comment, Heartbeat, Err and Close are safe for concurrent use from
// any goroutines: frames are written one at a time, never interleaved, in
// the order the calls take the Writer's lock. The heartbeat goroutine, when
// there is one, writes through the same lock. The [http.ResponseWriter] must
// not be used by anything else until Close has returned, and Close must be
// called before the handler returns.
//
// A Writer stops when the context given to [NewWriter] ends (usually the
// request's context: the client went away), when a write or a flush fails,
// or on Close. After it stopped, Send, Comment and Heartbeat write nothing
// and return why: the first write or flush error, else the context's cause,
// else [ErrClosed].
//
// A write to a client that stopped reading blocks until the connection's
// write deadline, if any; a host that wants a bound sets one with
// [http.ResponseController.SetWriteDeadline] before writing (the server's
// WriteTimeout would also end long streams).
//
// The zero Writer is not usable: make one with [NewWriter].
type Writer struct {
	mu       sync.Mutex
	enc      Encoder
	rc       *http.ResponseController
	writeErr error // first write or flush error
	closed   bool

	// ended reports the context's cause once it has ended, else nil. It is
	// checked on every write, so a write that starts after the context
	// ended never reaches the connection.
	ended   func() error
	quit    chan struct{} // closed by Close: stops the heartbeats
	beating sync.WaitGroup
}

// NewWriter prepares w for an event stream and returns its Writer. It sets
// the headers Content-Type: text/event-stream, Cache-Control: no-cache and
// X-Accel-Buffering: no (which keeps nginx-style proxies from buffering),
// removes Content-Length, writes status 200 and flushes, so a host sets any
// other header before calling it. It fails when the flush fails, wrapping
// the ResponseController's error ([http.ErrNotSupported] when w cannot
// flush); nothing else is started then.
//
// When opts.HeartbeatInterval is positive it starts one goroutine that sends
// a heartbeat every interval until ctx ends, a write fails or Close is
// called. ctx is normally r.Context() of the request being answered.
func NewWriter(ctx context.Context, w http.ResponseWriter, opts *WriterOptions) (*Writer, error) {
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Del("Content-Length")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return nil, fmt.Errorf("sse: flushing the response headers: %w", err)
	}
	sw := &Writer{enc: Encoder{w: w}, rc: rc, quit: make(chan struct{})}
	sw.ended = func() error {
		if ctx.Err() == nil {
			return nil
		}
		return context.Cause(ctx)
	}
	if opts != nil && opts.HeartbeatInterval > 0 {
		sw.beating.Go(func() { sw.beat(ctx, opts.HeartbeatInterval) })
	}
	return sw, nil
}

// beat sends a heartbeat on every tick until ctx ends, Close is called or a
// write fails.
func (w *Writer) beat(ctx context.Context, interval time.Duration) {
	ticker.Every(ctx, w.quit, interval, func(now time.Time) bool { return w.Heartbeat(now) == nil })
}

// Send writes f and flushes it. It returns the refusal of [AppendFrame]
// ([refusal.ErrInvalidFrame], and the Writer goes on), or why the Writer
// stopped (see Writer), or the write or flush error that stops it now.
func (w *Writer) Send(f Frame) error {
	return w.do(func(e *Encoder) error { return e.Encode(f) })
}

// Comment writes a comment frame (see [AppendComment]) and flushes it; it
// returns as Send does.
func (w *Writer) Comment(text string) error {
	return w.do(func(e *Encoder) error { return e.Comment(text) })
}

// Heartbeat writes a heartbeat frame stamped with now (see [AppendHeartbeat])
// and flushes it; it returns as Send does. Hosts without a heartbeat
// interval may call it on their own schedule.
func (w *Writer) Heartbeat(now time.Time) error {
	return w.do(func(e *Encoder) error { return e.Heartbeat(now.UnixMilli()) })
}

// do runs one encoding under the lock, then flushes, unless the Writer has
// stopped.
func (w *Writer) do(encode func(*Encoder) error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.stoppedLocked(); err != nil {
		return err
	}
	if err := encode(&w.enc); err != nil {
		if errors.Is(err, refusal.ErrInvalidFrame) {
			return err
		}
		w.writeErr = fmt.Errorf("sse: writing a frame: %w", err)
		return w.writeErr
	}
	if err := w.rc.Flush(); err != nil {
		w.writeErr = fmt.Errorf("sse: flushing a frame: %w", err)
		return w.writeErr
	}
	return nil
}

// stoppedLocked returns why the Writer has stopped, or nil.
func (w *Writer) stoppedLocked() error {
	switch {
	case w.writeErr != nil:
		return w.writeErr
	}
	if err := w.ended(); err != nil {
		return err
	}
	if w.closed {
		return ErrClosed
	}
	return nil
}

// Err returns why the Writer has stopped (see Writer), or nil while it can
// still write.
func (w *Writer) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.stoppedLocked()
}

// Close stops the Writer: it stops the heartbeats, waits for their
// goroutine to return, and returns the first write or flush error, or nil
// (the context's end is not an error of Close). It writes nothing and does
// not close the connection: the handler returning ends the response. Close
// may be called more than once; later calls return the same error.
func (w *Writer) Close() error {
	w.mu.Lock()
	first := !w.closed
	w.closed = true
	w.mu.Unlock()
	if first {
		close(w.quit)
	}
	w.beating.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writeErr
}
