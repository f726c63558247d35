package replay

import (
	"container/list"
	"context"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/observe"
)

// The defaults of [MemoryOptions] (docs/contract.md section 11.4).
const (
	// DefaultMaxFrames is the number of frames a Memory window retains per
	// turn by default: 10,000.
	DefaultMaxFrames = 10_000
	// DefaultMaxBytes is the canonical JSON a Memory window retains per
	// turn by default, in bytes: 2 MiB, twice the largest frame.
	DefaultMaxBytes = 2 << 20
	// DefaultMaxAge is how long a Memory window retains a frame by default:
	// one hour after its append.
	DefaultMaxAge = time.Hour
	// DefaultMaxTurns is the number of turns a Memory window holds frames
	// of by default: 1,000.
	DefaultMaxTurns = 1_000
	// DefaultEndedTTL is how long a Memory window keeps an ended turn's
	// frames by default: five minutes after its latest frame.
	DefaultEndedTTL = 5 * time.Minute
	// DefaultMaxTombstones is the number of evicted turns whose bounds a
	// Memory window remembers by default: 10,000.
	DefaultMaxTombstones = 10_000
)

// MemoryOptions configures a Memory window. A nil *MemoryOptions, and
// every zero field, means the default; a negative count or duration means
// no bound.
type MemoryOptions struct {
	// MaxFrameBytes is the largest canonical JSON Append accepts, in
	// bytes: 0 means [chatprotocol.DefaultMaxFrameBytes] (1 MiB), the
	// default of the reader's ParserOptions.MaxFrameBytes. Set both to the
	// same value.
	MaxFrameBytes int
	// MaxFrames is the number of frames retained per turn, the newest
	// (default [DefaultMaxFrames]).
	MaxFrames int
	// MaxBytes bounds the canonical JSON retained per turn, in bytes
	// (default [DefaultMaxBytes]); the newest frame is retained whatever its
	// size.
	MaxBytes int
	// MaxAge is how long after its append a frame is retained (default
	// [DefaultMaxAge]). A live turn with no frame younger than MaxAge is
	// evicted, its bounds kept as a tombstone.
	MaxAge time.Duration
	// MaxTurns bounds the turns whose frames are held (default
	// [DefaultMaxTurns]). Beyond it the ended turn that ended first is
	// evicted, or when none has ended, the least recently appended one.
	MaxTurns int
	// EndedTTL is how long after its latest frame an ended turn's frames
	// are kept (default [DefaultEndedTTL]), so that a reader reconnecting
	// after the end still replays it and sees Ended. Then it is evicted.
	EndedTTL time.Duration
	// MaxTombstones bounds the evicted turns whose bounds are remembered
	// (default [DefaultMaxTombstones]): Read of one reports Lower = Latest
	// and Ended as they were, so a reconnecting reader is told stale-cursor
	// or that the turn ended rather than cursor-ahead, and a writer whose
	// live turn was evicted goes on at Latest+1. Beyond it the oldest
	// tombstone is forgotten and its turn reads as unknown: (0, 0), where
	// the writer of a forgotten live turn is refused with sequence-gap.
	MaxTombstones int
	// Now is the clock of MaxAge and EndedTTL; nil means [time.Now].
	Now func() time.Time
	// Observer receives each Read's outcome, after the window's lock is
	// released: replay.serve with the cursor, the bounds and the count of
	// frames, or replay.refuse with the code of a stale or ahead cursor;
	// nil means silent.
	Observer observe.Observer
}

// Memory is the in-memory Window (docs/contract.md sections 11.4 and 11.7), the
// window of a lightweight host: it serves reconnects within one process
// and forgets everything on restart (see Capabilities). Its memory is
// bounded by [MemoryOptions]: per turn by frames, bytes and age, across turns
// by the count of turns held and of tombstones; retention drops a turn's
// oldest frames first and moves Lower, never opening a gap. Expired turns
// are reclaimed on Append.
//
// Append stores env.AppendJSON's bytes; Read returns a new slice of Frame
// headers whose Data are those stored bytes, shared, never copied. Wait
// costs no polling: each turn has one broadcast channel, closed and
// replaced by the append that follows a Wait, so N waiters cost O(N) memory
// once and an append O(1) besides waking them. A Memory is safe for
// concurrent use by any number of readers and writers.
type Memory struct {
	maxFrameBytes int
	maxFrames     int
	maxBytes      int
	maxAge        int64 // nanoseconds; -1: no bound
	maxTurns      int
	endedTTL      int64 // nanoseconds; -1: no bound
	maxTombstones int
	now           func() time.Time
	obs           observe.Observer

	mu    sync.RWMutex
	turns map[Key]*turn
	live  list.List // resident live turns, least recently appended first
	ended list.List // resident ended turns, least recently appended first
	tombs list.List // tombstones, oldest eviction first
}

var _ Window = (*Memory)(nil)

// turn is one key's state in a Memory. It is resident (frames held, in
// live or ended), a tombstone (bounds only, in tombs) or waited on only
// (in no list: never started, or a forgotten tombstone someone waits on).
// Its fields are guarded by Memory.mu; waited and waiters are also changed
// under the read lock.
type turn struct {
	key    Key
	frames []Frame // frames[i].Seq == lower+1+i
	at     []int64 // append time of frames[i], Unix nanoseconds, non-decreasing
	bytes  int     // total len of the frames' Data
	lower  int64
	latest int64
	ended  bool
	lastAt int64 // time of the latest append

	in   *list.List // live, ended, tombs or nil
	elem *list.Element

	ch      chan struct{} // closed and replaced by the append that follows a Wait
	waited  atomic.Bool   // a Wait holds ch
	waiters atomic.Int64  // Waits in progress, which keep the turn in the map
}

// NewMemory returns an empty Memory window configured by opts (nil means
// the defaults).
func NewMemory(opts *MemoryOptions) *Memory {
	var o MemoryOptions
	if opts != nil {
		o = *opts
	}
	m := &Memory{
		maxFrameBytes: frameLimit(o.MaxFrameBytes),
		maxFrames:     bound(o.MaxFrames, DefaultMaxFrames),
		maxBytes:      bound(o.MaxBytes, DefaultMaxBytes),
		maxAge:        int64(bound(o.MaxAge, DefaultMaxAge)),
		maxTurns:      bound(o.MaxTurns, DefaultMaxTurns),
		endedTTL:      int64(bound(o.EndedTTL, DefaultEndedTTL)),
		maxTombstones: bound(o.MaxTombstones, DefaultMaxTombstones),
		now:           o.Now,
		obs:           o.Observer,
		turns:         make(map[Key]*turn),
	}
	if m.now == nil {
		m.now = time.Now
	}
	return m
}

// bound resolves an option: 0 is def, a negative value (no bound) is -1.
func bound[T int | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return -1
	}
	return v
}

// Capabilities returns what a Memory window lets a host declare
// (docs/contract.md sections 8 and 11.7): connectionReplay true, and false for
// persistedHistory, persistedDecisions, completedToolCheckpoints and
// interruptedTurnRecovery, since nothing survives the process. This is the
// lightweight profile.
func (m *Memory) Capabilities() chatprotocol.ChatCapabilities {
	return chatprotocol.ChatCapabilities{ConnectionReplay: true}
}

// Append stores env as the next frame of key's turn (see [Window.Append]).
// Refusals are [*AppendError], with nothing stored; the frame limit is
// [MemoryOptions.MaxFrameBytes]. A done ctx returns ctx.Err().
func (m *Memory) Append(ctx context.Context, key Key, env *chatprotocol.ChatEventEnvelope) (Frame, error) {
	if err := ctx.Err(); err != nil {
		return Frame{}, err
	}
	f, err := EncodeFrame(env, m.maxFrameBytes)
	if err != nil {
		m.mu.RLock()
		b, _ := m.view(m.turns[key], m.now().UnixNano())
		m.mu.RUnlock()
		return Frame{}, &AppendError{Seq: seqOf(env), Bounds: b, Err: err}
	}
	now := m.now().UnixNano()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sweep(now)
	t := m.turns[key]
	b, _ := m.view(t, now)
	if err := CheckAppend(key, b, env); err != nil {
		return Frame{}, err
	}
	if t == nil {
		t = &turn{key: key, ch: make(chan struct{})}
		m.turns[key] = t
	}
	m.store(t, f, now, EndsTurn(env))
	return f, nil
}

// Read returns the bounds of key's turn and a page of the retained frames
// after cursor after, at most limit bytes of Data (see [Window.Read]). The
// frames are a new slice; their Data are the stored bytes, which nobody may
// modify. A refused cursor is a [*CursorError], returned with the bounds. A
// done ctx returns ctx.Err().
func (m *Memory) Read(ctx context.Context, key Key, after int64, limit int) (Bounds, []Frame, error) {
	if err := ctx.Err(); err != nil {
		return Bounds{}, nil, err
	}
	b, suffix, err := m.read(key, after, limit)
	if m.obs != nil {
		reportRead(ctx, m.obs, key, after, b, len(suffix), err)
	}
	return b, suffix, err
}

// read is Read under the window's read lock.
func (m *Memory) read(key Key, after int64, limit int) (Bounds, []Frame, error) {
	now := m.now().UnixNano()
	m.mu.RLock()
	defer m.mu.RUnlock()
	b, frames := m.view(m.turns[key], now)
	if err := CheckCursor(b, after); err != nil {
		return b, nil, err
	}
	if suffix := page(frames[after-b.Lower:], limit); len(suffix) > 0 {
		return b, slices.Clone(suffix), nil
	}
	return b, nil, nil
}

// Bounds returns the bounds of key's turn (see [Window.Bounds]). A done ctx
// returns ctx.Err().
func (m *Memory) Bounds(ctx context.Context, key Key) (Bounds, error) {
	if err := ctx.Err(); err != nil {
		return Bounds{}, err
	}
	now := m.now().UnixNano()
	m.mu.RLock()
	defer m.mu.RUnlock()
	b, _ := m.view(m.turns[key], now)
	return b, nil
}

// Wait blocks until key's turn holds a frame after cursor after, or has
// ended, or ctx is done (see [Window.Wait]), and returns the bounds then,
// with ctx.Err() in the last case. On a turn not yet started it waits for
// the first frame.
func (m *Memory) Wait(ctx context.Context, key Key, after int64) (Bounds, error) {
	b, t, ch := m.watch(key, after)
	if ch == nil {
		return b, nil
	}
	defer m.unwatch(t)
	// While this Wait is counted in t.waiters, t stays key's turn in the
	// map: it is looked at directly.
	for {
		select {
		case <-ch:
		case <-ctx.Done():
			m.mu.RLock()
			defer m.mu.RUnlock()
			b, _ := m.view(t, m.now().UnixNano())
			return b, ctx.Err()
		}
		m.mu.RLock()
		if t.latest > after || t.ended {
			b, _ := m.view(t, m.now().UnixNano())
			m.mu.RUnlock()
			return b, nil
		}
		t.waited.Store(true)
		ch = t.ch
		m.mu.RUnlock()
	}
}

// watch returns the bounds of key's turn and, unless they already answer
// a Wait for a frame after after, the turn and the channel the next append
// closes, with the Wait counted in turn.waiters. Checking the bounds and
// taking the channel under one lock is what makes a frame appended
// between a reader's Read and its Wait impossible to miss.
func (m *Memory) watch(key Key, after int64) (Bounds, *turn, <-chan struct{}) {
	m.mu.RLock()
	if t := m.turns[key]; t != nil {
		defer m.mu.RUnlock()
		return m.register(t, after)
	}
	m.mu.RUnlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.turns[key]
	if t == nil {
		t = &turn{key: key, ch: make(chan struct{})}
		m.turns[key] = t
	}
	return m.register(t, after)
}

// register is watch's work on t, under m.mu held for reading at least.
// Latest and Ended do not depend on the clock, which is read only for the
// bounds returned.
func (m *Memory) register(t *turn, after int64) (Bounds, *turn, <-chan struct{}) {
	if t.latest > after || t.ended {
		b, _ := m.view(t, m.now().UnixNano())
		return b, nil, nil
	}
	t.waiters.Add(1)
	t.waited.Store(true)
	return Bounds{}, t, t.ch
}

// unwatch ends a Wait counted by watch. The last Wait on a turn in no list
// (waited on only) removes it from the map.
func (m *Memory) unwatch(t *turn) {
	if t.waiters.Add(-1) > 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.waiters.Load() == 0 && t.in == nil && m.turns[t.key] == t {
		delete(m.turns, t.key)
	}
}

// view returns t's bounds and retained frames as of now, the frames older
// than MaxAge, or all of an ended turn past EndedTTL, left out (they are
// dropped on the next Append). A nil t is an unknown turn: (0, 0).
func (m *Memory) view(t *turn, now int64) (Bounds, []Frame) {
	if t == nil {
		return Bounds{}, nil
	}
	b := Bounds{Lower: t.lower, Latest: t.latest, Ended: t.ended}
	if t.ended && m.endedTTL >= 0 && now-t.lastAt >= m.endedTTL {
		b.Lower = b.Latest
		return b, nil
	}
	aged := m.aged(t, now)
	b.Lower += int64(aged)
	return b, t.frames[aged:]
}

// aged counts t's oldest frames older than MaxAge at now.
func (m *Memory) aged(t *turn, now int64) int {
	if m.maxAge < 0 || len(t.at) == 0 || now-t.at[0] < m.maxAge {
		return 0
	}
	return sort.Search(len(t.at), func(i int) bool { return now-t.at[i] < m.maxAge })
}

// store appends f to t, under m.mu: it drops what has expired, appends,
// trims to MaxFrames and MaxBytes (the newest frame stays), files t as
// resident, evicting another turn beyond MaxTurns, and wakes t's waiters.
func (m *Memory) store(t *turn, f Frame, now int64, ends bool) {
	b, _ := m.view(t, now)
	for t.lower < b.Lower {
		m.dropOldest(t)
	}
	now = max(now, t.lastAt) // keeps t.at non-decreasing under any clock
	t.frames = append(t.frames, f)
	t.at = append(t.at, now)
	t.bytes += len(f.Data)
	t.latest, t.lastAt = f.Seq, now
	t.ended = t.ended || ends
	for len(t.frames) > 1 && (m.maxFrames >= 0 && len(t.frames) > m.maxFrames || m.maxBytes >= 0 && t.bytes > m.maxBytes) {
		m.dropOldest(t)
	}
	to := &m.live
	if t.ended {
		to = &m.ended
	}
	switch wasResident := t.in == &m.live || t.in == &m.ended; {
	case t.in == to:
		to.MoveToBack(t.elem)
	case wasResident:
		m.file(t, to)
	default:
		m.file(t, to)
		if m.maxTurns >= 0 && m.live.Len()+m.ended.Len() > m.maxTurns {
			m.evict(m.victim(t))
		}
	}
	if t.waited.Swap(false) {
		close(t.ch)
		t.ch = make(chan struct{})
	}
}

// dropOldest drops t's oldest frame, moving Lower up by one.
func (m *Memory) dropOldest(t *turn) {
	t.bytes -= len(t.frames[0].Data)
	t.frames[0] = Frame{} // the backing array no longer holds the bytes
	t.frames, t.at = t.frames[1:], t.at[1:]
	t.lower++
	if len(t.frames) == 0 {
		t.frames, t.at = nil, nil
	}
}

// file moves t from its list, if any, to the back of to.
func (m *Memory) file(t *turn, to *list.List) {
	if t.in != nil {
		t.in.Remove(t.elem)
	}
	t.in, t.elem = to, to.PushBack(t)
}

// victim picks the turn MaxTurns evicts for keep: the first-ended turn,
// else the least recently appended live one, never keep itself.
func (m *Memory) victim(keep *turn) *turn {
	for _, l := range []*list.List{&m.ended, &m.live} {
		for e := l.Front(); e != nil; e = e.Next() {
			if t := e.Value.(*turn); t != keep {
				return t
			}
		}
	}
	return nil
}

// evict turns a resident t into a tombstone: its frames are dropped, its
// bounds kept as (Latest, Latest]. Beyond MaxTombstones the oldest
// tombstone is forgotten: removed from the map unless a Wait holds it.
func (m *Memory) evict(t *turn) {
	if t == nil {
		return
	}
	t.frames, t.at, t.bytes, t.lower = nil, nil, 0, t.latest
	m.file(t, &m.tombs)
	if m.maxTombstones < 0 || m.tombs.Len() <= m.maxTombstones {
		return
	}
	old := m.tombs.Remove(m.tombs.Front()).(*turn)
	old.in, old.elem = nil, nil
	if old.waiters.Load() == 0 {
		delete(m.turns, old.key)
	}
}

// sweep evicts, under m.mu, the resident turns expired at now: ended ones
// past EndedTTL and live ones whose every frame is older than MaxAge. Each
// list is ordered by latest append, so it stops at the first turn kept.
func (m *Memory) sweep(now int64) {
	for _, s := range [...]struct {
		l   *list.List
		ttl int64
	}{{&m.ended, m.endedTTL}, {&m.live, m.maxAge}} {
		for e := s.l.Front(); e != nil && s.ttl >= 0; e = s.l.Front() {
			t := e.Value.(*turn)
			if now-t.lastAt < s.ttl {
				break
			}
			m.evict(t)
		}
	}
}
