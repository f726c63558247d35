package redisstore

import (
	"context"
	"sync"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// fetchKey names a read: a turn's page after after of at most limit
// bytes, or its bounds alone (after -1).
type fetchKey struct {
	key   replay.Key
	after int64
	limit int
}

// fetchCall is one read that the callers asking for the same fetchKey
// meanwhile share.
type fetchCall struct {
	done chan struct{} // closed once p and err are set
	p    page
	err  error
}

// fetcher runs the reads of one fetchKey, one at a time: a caller joins
// the next read, never one already running, which may have started before
// the frame it was woken for was stored.
type fetcher struct {
	next *fetchCall // the read callers join; nil when none asked
}

// fetches holds a Window's running fetchers.
type fetches struct {
	mu sync.Mutex
	m  map[fetchKey]*fetcher
}

// fetch returns the result of a read of k that starts after the call,
// shared with every caller asking for k meanwhile; it runs on the
// Window's context, retried for Patience, and fetch returns ctx's error as
// soon as ctx is done, whatever Redis is doing (docs/contract.md section
// 14.2).
func (w *Window) fetch(ctx context.Context, k fetchKey) (page, error) {
	fs := &w.fetches
	fs.mu.Lock()
	if fs.m == nil {
		fs.m = make(map[fetchKey]*fetcher)
	}
	f, running := fs.m[k]
	if !running {
		f = &fetcher{}
		fs.m[k] = f
	}
	if f.next == nil {
		f.next = &fetchCall{done: make(chan struct{})}
	}
	c := f.next
	fs.mu.Unlock()
	if !running {
		go w.runFetcher(k, f)
	}
	select {
	case <-c.done:
		return c.p, c.err
	case <-ctx.Done():
		return page{}, ctx.Err()
	}
}

// runFetcher runs k's reads until no caller waits for another.
func (w *Window) runFetcher(k fetchKey, f *fetcher) {
	fs := &w.fetches
	for {
		fs.mu.Lock()
		c := f.next
		f.next = nil
		if c == nil {
			delete(fs.m, k)
			fs.mu.Unlock()
			return
		}
		fs.mu.Unlock()
		c.err = w.patient(w.ctx, func() error {
			var err error
			c.p.b, c.p.frames, err = w.query(w.ctx, k.key, k.after, k.limit)
			return err
		})
		if c.err != nil && w.ctx.Err() != nil {
			c.err = errClosed
		}
		close(c.done)
	}
}
