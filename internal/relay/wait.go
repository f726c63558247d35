package relay

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// waitKey names the streams of a turn caught up at one cursor.
type waitKey struct {
	key    replay.Key
	cursor int64
}

// waiter is one window wait shared by every stream of a turn caught up at
// the same cursor, as the stream handler's hub is (docs/contract.md section
// 14.2): one Wait and one heartbeat timer per turn rather than per stream.
type waiter struct {
	done    chan struct{} // closed when the wait ended
	idle    bool          // the heartbeat interval passed with nothing to tell
	err     error
	streams int // the streams waiting; guarded by waiters.mu
	cancel  context.CancelFunc

	// wake bounds the first Read of every stream the wait woke: one timer
	// per turn and wake, stopped by the last stream done with it.
	wake       context.Context
	stopWake   context.CancelFunc
	readsAfter atomic.Int64
}

// release counts a woken stream's first Read done.
func (w *waiter) release() {
	if w.readsAfter.Add(-1) == 0 {
		w.stopWake()
	}
}

// waiters is a Server's shared waits.
type waiters struct {
	mu sync.Mutex
	m  map[waitKey]*waiter
}

// share waits for a frame after cursor, or the end of key's turn, sending
// a heartbeat with beat each heartbeat interval, in the one wait every
// stream of the turn caught up at cursor shares. It returns the waiter
// that woke the stream, whose release the caller calls once it has read.
func (s *Server) share(ctx context.Context, key replay.Key, cursor int64, beat func() error) (*waiter, error) {
	for {
		w := s.join(waitKey{key, cursor})
		select {
		case <-w.done:
			if w.err != nil && !w.idle {
				w.release()
				if !s.Closed() {
					s.Log.WarnContext(ctx, "waiting on the window failed", "after", cursor, "err", w.err)
				}
				return nil, w.err
			}
			if !w.idle {
				return w, nil
			}
			w.release()
			if err := beat(); err != nil {
				return nil, err
			}
		case <-ctx.Done():
			s.leave(waitKey{key, cursor}, w)
			return nil, ctx.Err()
		}
	}
}

// join returns the wait of k, starting it when there is none.
func (s *Server) join(k waitKey) *waiter {
	s.waits.mu.Lock()
	defer s.waits.mu.Unlock()
	if w := s.waits.m[k]; w != nil {
		w.streams++
		return w
	}
	if s.waits.m == nil {
		s.waits.m = make(map[waitKey]*waiter)
	}
	ctx, cancel := context.WithCancel(s.Closing())
	w := &waiter{done: make(chan struct{}), streams: 1, cancel: cancel}
	s.waits.m[k] = w
	go func() {
		_, idle, err := s.WaitOnce(ctx, k.key, k.cursor)
		w.wake, w.stopWake = s.Bounded(s.Closing())
		s.waits.mu.Lock()
		if s.waits.m[k] == w {
			delete(s.waits.m, k)
		}
		w.readsAfter.Store(int64(w.streams))
		if w.streams == 0 {
			w.stopWake() // every stream left before the wait ended
		}
		s.waits.mu.Unlock()
		cancel()
		w.idle, w.err = idle, err
		close(w.done)
	}()
	return w
}

// leave counts a stream out of w, ending the wait when none is left.
func (s *Server) leave(k waitKey, w *waiter) {
	s.waits.mu.Lock()
	defer s.waits.mu.Unlock()
	if s.waits.m[k] != w {
		w.release() // the wait ended as the stream left: it reads nothing
		return
	}
	if w.streams--; w.streams == 0 {
		delete(s.waits.m, k)
		w.cancel()
	}
}
