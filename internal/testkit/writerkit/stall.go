package writerkit

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// StallingWindow is a window whose store can stall: between Stall and
// Release every Read blocks until its context ends (or Release comes),
// as a store that stopped answering does; Wait, Append and Bounds go on.
// A stream then learns of a new frame but cannot read it.
type StallingWindow struct {
	replay.Window

	mu      sync.Mutex
	gate    chan struct{} // closed by Release; nil while not stalled
	stalled atomic.Int64
}

// NewStallingWindow returns w with a store that can stall, not stalled.
func NewStallingWindow(w replay.Window) *StallingWindow {
	return &StallingWindow{Window: w}
}

// Stall makes every Read from now on block until Release.
func (s *StallingWindow) Stall() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate == nil {
		s.gate = make(chan struct{})
	}
}

// Release ends the stall: the blocked Reads read, and so does every later
// one.
func (s *StallingWindow) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gate != nil {
		close(s.gate)
		s.gate = nil
	}
}

// Stalled returns the number of Reads that found the store stalled.
func (s *StallingWindow) Stalled() int64 { return s.stalled.Load() }

// Read reads w's page after after, once the store is not stalled; it
// returns ctx's error when ctx ends first.
func (s *StallingWindow) Read(ctx context.Context, key replay.Key, after int64, limit int) (replay.Bounds, []replay.Frame, error) {
	s.mu.Lock()
	gate := s.gate
	s.mu.Unlock()
	if gate != nil {
		s.stalled.Add(1)
		select {
		case <-gate:
		case <-ctx.Done():
			return replay.Bounds{}, nil, ctx.Err()
		}
	}
	return s.Window.Read(ctx, key, after, limit)
}
