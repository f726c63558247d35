package relay

import (
	"container/list"
	"context"
	"errors"
	"sync"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// Codec turns one turn's frames into a protocol's bytes. It is given the
// turn's frames in seq order from seq 1, each once, but for those it does
// not map; it is not safe for concurrent use (the Cache serializes it).
type Codec interface {
	// Maps reports whether a frame of type typ may add output; the frames
	// of the other types are passed over unread.
	Maps(typ string) bool
	// Append appends the output of f, the frame after the last one given,
	// whose envelope is env, to dst: zero or more complete SSE frames. An
	// error ends the streams that read it. An empty delta is no output in
	// any protocol and is not given.
	Append(dst []byte, f replay.Frame, env chatprotocol.ChatEventEnvelope) ([]byte, error)
	// Done reports whether the output so far ends the stream: the
	// protocol's run or message is over, and no later frame is sent.
	Done() bool
}

// transcode appends c's output of f: nothing for a frame of a type c does
// not map or an empty delta; a frame that is not an envelope is an error.
func transcode(c Codec, dst []byte, f replay.Frame) ([]byte, error) {
	if !c.Maps(f.Type) {
		return dst, nil
	}
	env, err := chatprotocol.ParseEnvelope(f.Data)
	if err != nil {
		return dst, err
	}
	if d, ok := env.Event.(*chatprotocol.DeltaEvent); ok && d.Text == "" {
		return dst, nil
	}
	return c.Append(dst, f, env)
}

// CacheKey names one Codec of a Cache: a turn and the variant of its
// protocol's output (the ids a request chose that the output carries).
type CacheKey struct {
	Turn    replay.Key
	Variant string
}

// The defaults of a Cache.
const (
	// DefaultCacheTurns is the number of turns whose Codec a Cache keeps.
	DefaultCacheTurns = 4096
	// DefaultCacheFrames is the number of most recent outputs a Cache
	// keeps per turn.
	DefaultCacheFrames = 256
)

// Cache holds one Codec per turn and the outputs of its most recent frames,
// shared by every stream of the turn, so that each frame is transcoded
// once whatever the number of streams. It evicts the least recently used
// turn beyond its bound. Safe for concurrent use.
type Cache struct {
	turns, frames int

	mu  sync.Mutex
	m   map[CacheKey]*list.Element // of *entry
	lru list.List                  // most recently used at the front
}

// NewCache returns a Cache of at most turns Codecs, each keeping the
// outputs of its frames most recent frames; 0 means the defaults.
func NewCache(turns, frames int) *Cache {
	if turns <= 0 {
		turns = DefaultCacheTurns
	}
	if frames <= 0 {
		frames = DefaultCacheFrames
	}
	return &Cache{turns: turns, frames: frames, m: make(map[CacheKey]*list.Element)}
}

// entry is one turn's Codec and its recent outputs, a ring: the output of
// seq s is outs[(s-1)%len(outs)] while s > seq-len(outs); the Codec has
// read every frame through seq.
type entry struct {
	key CacheKey

	mu     sync.Mutex
	codec  Codec
	seq    int64
	outs   [][]byte
	doneAt int64 // the seq whose output ended the stream; 0 while none has
	broken error
}

// get returns key's entry, making it with newCodec when the Cache has none.
func (c *Cache) get(key CacheKey, newCodec func() Codec) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		c.lru.MoveToFront(el)
		return el.Value.(*entry)
	}
	e := &entry{key: key, codec: newCodec(), outs: make([][]byte, c.frames)}
	c.m[key] = c.lru.PushFront(e)
	for c.lru.Len() > c.turns {
		old := c.lru.Back()
		c.lru.Remove(old)
		delete(c.m, old.Value.(*entry).key)
	}
	return e
}

// errBehind tells a stream that the shared entry no longer holds, or does
// not yet hold, the state its next frame needs.
var errBehind = errors.New("relay: the shared codec is not at this frame")

// output returns the output of f and whether it ends the stream, computing
// it once for every stream: f is the next frame of a stream that read
// every frame before it. errBehind means the entry cannot serve f: its
// output is no longer kept, or the entry was made anew after the stream
// began.
func (e *entry) output(f replay.Frame) ([]byte, bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.broken != nil:
		return nil, false, e.broken
	case e.doneAt != 0 && f.Seq > e.doneAt:
		return nil, true, nil // nothing after the end
	case f.Seq <= e.seq:
		if f.Seq <= e.seq-int64(len(e.outs)) {
			return nil, false, errBehind
		}
		return e.outs[(f.Seq-1)%int64(len(e.outs))], f.Seq == e.doneAt, nil
	case f.Seq != e.seq+1:
		return nil, false, errBehind
	}
	out, err := transcode(e.codec, nil, f)
	if err != nil {
		e.broken = err
		return nil, false, err
	}
	e.seq = f.Seq
	e.outs[(f.Seq-1)%int64(len(e.outs))] = out
	if e.doneAt == 0 && e.codec.Done() {
		e.doneAt = f.Seq
	}
	return out, f.Seq == e.doneAt, nil
}

// transcoder gives one stream the output of its frames: from the shared
// entry while it can, else from a private Codec rebuilt from the window.
type transcoder struct {
	shared   *entry
	private  Codec
	newCodec func() Codec
	done     bool
}

// next returns the output of f, the frame after the last one the stream
// got, rebuilding a private Codec from the window's frames 1 through
// f.Seq-1 when the shared entry cannot serve f.
func (t *transcoder) next(ctx context.Context, s *Server, key replay.Key, f replay.Frame) ([]byte, error) {
	if t.done {
		return nil, nil
	}
	if t.private == nil {
		out, done, err := t.shared.output(f)
		if !errors.Is(err, errBehind) {
			t.done = done
			return out, err
		}
		if t.private, err = s.rebuild(ctx, key, f.Seq-1, t.newCodec); err != nil {
			return nil, err
		}
	}
	out, err := transcode(t.private, nil, f)
	t.done = t.private.Done()
	return out, err
}

// errRetained is a rebuild's error when the window no longer holds the
// turn's first frames.
var errRetained = errors.New("relay: the window no longer holds the turn's first frames")

// rebuild returns a new Codec that has read key's frames 1 through upto.
func (s *Server) rebuild(ctx context.Context, key replay.Key, upto int64, newCodec func() Codec) (Codec, error) {
	c := newCodec()
	var cursor int64
	for cursor < upto {
		b, frames, err := s.Read(ctx, key, cursor, func() error { return nil })
		if err != nil {
			return nil, err
		}
		if b.Lower > 0 {
			return nil, errRetained
		}
		for _, f := range frames {
			if f.Seq > upto {
				return c, nil
			}
			if f.Seq != cursor+1 {
				return nil, errGap
			}
			if _, err := transcode(c, nil, f); err != nil {
				return nil, err
			}
			cursor = f.Seq
		}
		if len(frames) == 0 {
			return nil, errGap
		}
	}
	return c, nil
}
