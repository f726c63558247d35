package redisstore

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// fetchKey names a read: a turn's page after after of at most limit
// bytes, or its bounds alone (after -1).
type fetchKey struct {
	key   replay.Key
	after int64
	limit int
}

// fetchCall is one read that the callers of its fetchKey share.
type fetchCall struct {
	done chan struct{} // closed once p and err are set
	p    page
	err  error

	// Set when the read starts: the turn's newest seq the Window knew to
	// be stored (turnReads.known), the turn's epoch, and the number of the
	// turn's reads completed before (turnReads.completed).
	known int64
	epoch uint64
	after uint64

	// wake is the watch whose waiters wake once the read is done, when a
	// message started it (prefetch); guarded by fetches.mu.
	wake *watch
}

// fetcher runs the reads of one fetchKey, one at a time. A caller joins
// the read running when it started after the frame the caller asks for
// was known to be stored (its result holds that frame), and otherwise the
// next read, which starts once the running one is done.
type fetcher struct {
	running *fetchCall // the read in flight; nil when none
	next    *fetchCall // the read callers join; nil when none asked
}

// fetches holds what a Window knows of the turns it reads: per turn, the
// running fetchers and the frames of the newest reads. Whatever changes
// them takes mu exclusively; the readers served from the kept frames take
// it shared, to find a turn's reads, whose view they read (the waiters
// read it without a lock).
type fetches struct {
	mu    sync.RWMutex
	turns map[replay.Key]*turnReads
}

// turnReads is one turn's reads in a Window. It lives while a fetch, a
// running fetcher or a watch of the turn's channel holds it (users).
type turnReads struct {
	users    int
	fetchers map[fetchKey]*fetcher

	// known is the turn's newest seq the Window knows to be stored, from
	// the reads' bounds and the channel's messages; heard is the newest
	// message's Latest (0: none since the last invalidation).
	known, heard int64
	// epoch counts the invalidations: a read that started in an older
	// epoch neither serves a joining caller nor fills the cache.
	epoch uint64
	// completed counts the reads done, cache.gen is the count once the
	// read that last set cache.b was done.
	completed uint64
	cache     frameCache
	// limit is the page size of the turn's latest Read, for prefetch.
	limit int

	// view is a copy of known, cache and limit that the readers and the
	// waiters read without a lock; every change of them publishes a new
	// one before fs.mu is released (publish).
	view atomic.Pointer[readsView]
}

// readsView is what a turnReads knew at one time, never changed once
// published: the kept frames are served from it.
type readsView struct {
	cache frameCache
	known int64
	limit int
}

// publish publishes tr's view. fs.mu is held.
func (tr *turnReads) publish() {
	tr.view.Store(&readsView{cache: tr.cache, known: tr.known, limit: tr.limit})
}

// cacheBytes bounds the frame data a Window keeps per turn: 64 KiB, the
// newest frames that its reads returned.
const cacheBytes = 64 << 10

// frameCache is the newest frames of a turn that a Window's reads
// returned, consecutive seqs ending at the newest, with the bounds of the
// read that returned them (or of a later one that confirmed them).
type frameCache struct {
	b      replay.Bounds
	gen    uint64
	frames []replay.Frame
	bytes  int
}

// hold returns key's turnReads, counting a user. fs.mu is held.
func (fs *fetches) hold(key replay.Key) *turnReads {
	if fs.turns == nil {
		fs.turns = make(map[replay.Key]*turnReads)
	}
	tr := fs.turns[key]
	if tr == nil {
		tr = &turnReads{fetchers: make(map[fetchKey]*fetcher)}
		tr.publish()
		fs.turns[key] = tr
	}
	tr.users++
	return tr
}

// release uncounts a user of key's tr, dropping it with its cache after
// the last. fs.mu is held.
func (fs *fetches) release(key replay.Key, tr *turnReads) {
	if tr.users--; tr.users == 0 {
		delete(fs.turns, key)
	}
}

// fetch returns the result of a read of k, shared with the callers asking
// for k meanwhile: from the turn's cache when it holds the page and is as
// new as anything the Window knows of the turn, else the running read when
// it started after the frame after k.after was known to be stored, else a
// read that starts after the call. The reads run on the Window's context,
// retried for Patience, and fetch returns ctx's error as soon as ctx is
// done, whatever Redis is doing (docs/contract.md section 14.2).
func (w *Window) fetch(ctx context.Context, k fetchKey) (page, error) {
	fs := &w.fetches
	if k.after >= 0 {
		// The common case: a page of the kept frames, of the page size
		// the turn's readers asked for last, served from the turn's view
		// under the shared lock.
		fs.mu.RLock()
		if tr := fs.turns[k.key]; tr != nil {
			if v := tr.view.Load(); v.limit == k.limit {
				if p, ok := v.cache.page(v.known, k.after, k.limit); ok {
					fs.mu.RUnlock()
					return p, nil
				}
			}
		}
		fs.mu.RUnlock()
	}
	fs.mu.Lock()
	tr := fs.hold(k.key)
	if k.after >= 0 {
		if tr.limit != k.limit {
			tr.limit = k.limit
			tr.publish()
		}
		if p, ok := tr.cached(k.after, k.limit); ok {
			fs.release(k.key, tr)
			fs.mu.Unlock()
			return p, nil
		}
	}
	c, f, start := tr.join(k)
	fs.release(k.key, tr)
	fs.mu.Unlock()
	if start {
		go w.runFetcher(k, tr, f)
	}
	select {
	case <-c.done:
		return c.p, c.err
	case <-ctx.Done():
		return page{}, ctx.Err()
	}
}

// join returns the read of k a caller joins: the running one when it
// started after frame k.after+1 was known to be stored, else the next one.
// It creates k's fetcher when there is none; then start says that the
// caller starts it (runFetcher). fs.mu is held.
func (tr *turnReads) join(k fetchKey) (c *fetchCall, f *fetcher, start bool) {
	f = tr.fetchers[k]
	if f == nil {
		f, start = &fetcher{}, true
		tr.fetchers[k] = f
		tr.users++ // the fetcher's, released when it stops
	}
	c = f.running
	if c == nil || k.after < 0 || c.epoch != tr.epoch || c.known <= k.after {
		if f.next == nil {
			f.next = &fetchCall{done: make(chan struct{})}
		}
		c = f.next
	}
	return c, f, start
}

// prefetch starts the read of the frames after the newest one cached, of
// the page size the turn's readers last asked for, when b tells of newer
// frames, and returns it: a message wakes the waiters of the turn, whose
// reads then take its frames. It returns nil, and starts nothing, when the
// cache is empty or holds b's frames, or when such a read already runs
// that started before b's frames were known. fs.mu is held.
func (w *Window) prefetch(key replay.Key, tr *turnReads, b replay.Bounds) *fetchCall {
	n := len(tr.cache.frames)
	if n == 0 || tr.limit == 0 || b.Latest <= tr.cache.frames[n-1].Seq {
		return nil
	}
	k := fetchKey{key: key, after: tr.cache.frames[n-1].Seq, limit: tr.limit}
	c, f, start := tr.join(k)
	if start {
		go w.runFetcher(k, tr, f)
	} else if c != f.running {
		return nil
	}
	return c
}

// runFetcher runs k's reads until no caller waits for another.
func (w *Window) runFetcher(k fetchKey, tr *turnReads, f *fetcher) {
	fs := &w.fetches
	for {
		fs.mu.Lock()
		c := f.next
		f.next = nil
		if c == nil {
			delete(tr.fetchers, k)
			fs.release(k.key, tr)
			fs.mu.Unlock()
			return
		}
		c.known, c.epoch, c.after = tr.known, tr.epoch, tr.completed
		f.running = c
		fs.mu.Unlock()
		c.err = w.patient(w.ctx, func() error {
			var err error
			c.p.b, c.p.frames, err = w.query(w.ctx, k.key, k.after, k.limit)
			return err
		})
		if c.err != nil && w.ctx.Err() != nil {
			c.err = errClosed
		}
		fs.mu.Lock()
		f.running = nil
		if c.err != nil {
			tr.invalidate()
		} else {
			tr.learn(c)
		}
		wake := c.wake
		fs.mu.Unlock()
		close(c.done)
		if wake != nil {
			w.sub.wakeAfterRead(wake)
		}
	}
}

// invalidate forgets what the Window knows of the turn: Redis may have
// lost its newest frames (a failed read, a lost subscriber connection, a
// message going back), so that the next reader reads them. fs.mu is held.
func (tr *turnReads) invalidate() {
	tr.epoch++
	tr.known, tr.heard = 0, 0
	tr.cache = frameCache{}
	tr.publish()
}

// appended tells key's reads in this Window, if any, that an append
// stored seq, so that a Read after it is served nothing older, or, with
// seq 0, that an append's outcome is unknown: the turn's reads are
// invalidated.
func (w *Window) appended(key replay.Key, seq int64) {
	fs := &w.fetches
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if tr := fs.turns[key]; tr != nil {
		if seq == 0 {
			tr.invalidate()
		} else if seq > tr.known {
			tr.known = seq
			tr.publish()
		}
	}
}

// heardBounds takes the bounds a message of the turn's channel carried:
// messages come in the order of the appends, so that one going back below
// the previous one tells of lost frames. fs.mu is held.
func (tr *turnReads) heardBounds(b replay.Bounds) {
	if b.Latest < tr.heard {
		tr.invalidate()
	}
	tr.heard = b.Latest
	if b.Latest > tr.known {
		tr.known = b.Latest
		tr.publish()
	}
}

// learn takes the result of the read c. A read that started after the one
// that set the cache's bounds was done and finds an older Latest tells of
// lost frames: the cache is dropped and refilled from c. A read that ran
// beside it and finds an older Latest is older: it leaves the cache as it
// is. fs.mu is held.
func (tr *turnReads) learn(c *fetchCall) {
	if c.epoch != tr.epoch {
		return
	}
	tr.completed++
	b, cb := c.p.b, &tr.cache.b
	switch {
	case b.Latest < cb.Latest && c.after >= tr.cache.gen:
		tr.invalidate()
		tr.completed++
	case b.Latest < cb.Latest || (b.Latest == cb.Latest && cb.Ended && !b.Ended):
		return
	}
	tr.known = max(tr.known, b.Latest)
	tr.cache.b, tr.cache.gen = b, tr.completed
	tr.cache.add(c.p.frames, b)
	tr.publish()
}

// add appends frames, consecutive seqs, to the cache: those after its
// newest, or all of them in its place when they do not follow on or differ
// from the cached frames of the same seqs; then it drops the frames b no
// longer retains and the oldest beyond cacheBytes.
func (fc *frameCache) add(frames []replay.Frame, b replay.Bounds) {
	if n := len(fc.frames); len(frames) > 0 && n > 0 {
		lo, hi := fc.frames[0].Seq, fc.frames[n-1].Seq
		switch {
		case frames[0].Seq > hi+1 || !fc.agrees(frames, lo, hi):
			fc.frames, fc.bytes = nil, 0
		case frames[len(frames)-1].Seq <= hi:
			frames = nil
		default:
			frames = frames[hi+1-frames[0].Seq:]
		}
	}
	for _, f := range frames {
		fc.frames = append(fc.frames, f)
		fc.bytes += len(f.Data)
	}
	drop := 0
	for drop < len(fc.frames) && (fc.frames[drop].Seq <= b.Lower || fc.bytes > cacheBytes) {
		fc.bytes -= len(fc.frames[drop].Data)
		drop++
	}
	// No element is written again once stored: the pages served from the
	// cache and its views are read after fs.mu is released.
	fc.frames = fc.frames[drop:]
}

// agrees reports whether frames hold the same data as the cache, which
// holds lo to hi, at the seqs both hold.
func (fc *frameCache) agrees(frames []replay.Frame, lo, hi int64) bool {
	for _, f := range frames {
		if f.Seq >= lo && f.Seq <= hi && !bytes.Equal(f.Data, fc.frames[f.Seq-lo].Data) {
			return false
		}
	}
	return true
}

// cached returns the page after after of at most limit bytes from the
// cache (see frameCache.page). fs.mu is held.
func (tr *turnReads) cached(after int64, limit int) (page, bool) {
	return tr.cache.page(tr.known, after, limit)
}

// page returns the page after after of at most limit bytes from the
// cache, when the cache is as new as anything the Window knows of the
// turn (its bounds' Latest is at least known), holds frame after+1, and
// the page ends where a read would end it: at the bounds' Latest, or
// before a frame that does not fit. It changes nothing.
func (fc *frameCache) page(known, after int64, limit int) (page, bool) {
	n := len(fc.frames)
	if n == 0 || fc.b.Latest < known || after < fc.b.Lower {
		return page{}, false
	}
	lo := fc.frames[0].Seq
	if after+1 < lo || after >= fc.frames[n-1].Seq {
		return page{}, false
	}
	i := int(after + 1 - lo)
	j, size := i, 0
	for j < n && (j == i || size+len(fc.frames[j].Data) <= limit) {
		size += len(fc.frames[j].Data)
		j++
	}
	if j == n && fc.frames[n-1].Seq < fc.b.Latest {
		return page{}, false // a read would return more
	}
	return page{b: fc.b, frames: fc.frames[i:j]}, true
}
