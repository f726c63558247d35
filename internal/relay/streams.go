package relay

import (
	"context"
	"sync"

	"github.com/Papercusp/chat-protocol-go/internal/notify"
)

// Streams counts the streams a server serves, for its Close and Shutdown
// (docs/contract.md section 14.2): Closing is done once Close is called,
// after which Begin refuses every new stream, and Shutdown waits until the
// streams begun have ended. Safe for concurrent use; make one with
// [NewStreams].
type Streams struct {
	closing context.Context
	close   context.CancelFunc

	mu      sync.Mutex
	n       int           // the streams begun and not yet ended
	drained notify.Signal // broadcast when n drops to 0, for Shutdown
}

// NewStreams returns the Streams of a server that is not closing.
func NewStreams() *Streams {
	s := &Streams{}
	s.closing, s.close = context.WithCancel(context.Background())
	return s
}

// Closing is done once Close is called: a stream ends, after the frame it
// is writing, when it is.
func (s *Streams) Closing() context.Context { return s.closing }

// Close makes Closing done and Closed true. It may be called more than
// once.
func (s *Streams) Close() { s.close() }

// Closed reports whether Close was called.
func (s *Streams) Closed() bool { return s.closing.Err() != nil }

// Shutdown calls Close and waits until every stream has ended or ctx ends,
// and returns ctx's error then.
func (s *Streams) Shutdown(ctx context.Context) error {
	s.Close()
	return s.drained.Wait(ctx, &s.mu, func() bool { return s.n == 0 })
}

// Begin counts a stream that starts, or reports false once closing; a
// stream it counted calls End when it ends.
func (s *Streams) Begin() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Err() != nil {
		return false
	}
	s.n++
	return true
}

// End counts a stream that ended.
func (s *Streams) End() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n--; s.n == 0 {
		s.drained.Broadcast()
	}
}
