package serve

import (
	"errors"
	"hash/maphash"
	"sync"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// cache holds, for each turn being served through a Codec, the entry its
// streams share, so that each frame is transcoded once whatever the number
// of streams. An entry lives while a stream holds it: it is freed when the
// turn's last stream ends or leaves it.
type cache struct {
	limit int // the most output bytes an entry keeps, its newest output and those its streams still want aside
	mu    sync.Mutex
	m     map[cacheKey]*entry
}

// cacheKey names one entry: a turn and the variant of its protocol's output
// (the ids a request chose that the output carries).
type cacheKey struct {
	turn    replay.Key
	variant string
}

func (c *cache) init(limit int) {
	c.limit = limit
	c.m = make(map[cacheKey]*entry)
}

// entry is one turn's Codec and the outputs of its most recent frames:
// outs[i] is the output of seq base+i and prints[i] the fingerprint of
// that frame's stored bytes, the Codec has read every frame through seq,
// and the outputs kept add up to at most the cache's limit but for the
// newest and for those a holding stream still wants (up to wantedFactor
// times the limit): streams woken together are never behind one another.
type entry struct {
	key     cacheKey
	holders int // the streams holding it; guarded by cache.mu

	mu     sync.Mutex
	codec  Codec
	first  uint64 // the fingerprint of frame 1's stored bytes, once read
	seq    int64
	base   int64
	outs   [][]byte
	prints []uint64
	wants  map[*output]int64 // the seq each holding stream that got an output asks next
	bytes  int
	doneAt int64 // the seq whose output ended the stream; 0 while none has
	broken error
}

// acquire returns the entry of key's turn and variant, made with newCodec
// when there is none or when fresh, and counts the caller as its holder.
func (c *cache) acquire(key replay.Key, variant string, newCodec func() Codec, fresh bool) *entry {
	k := cacheKey{key, variant}
	c.mu.Lock()
	defer c.mu.Unlock()
	en := c.m[k]
	if en == nil || fresh {
		en = &entry{key: k, codec: newCodec(), base: 1, wants: make(map[*output]int64)}
		c.m[k] = en
	}
	en.holders++
	return en
}

// release counts o, a holder of en, out, and frees en with its last.
func (c *cache) release(en *entry, o *output) {
	en.mu.Lock()
	delete(en.wants, o)
	en.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if en.holders--; en.holders == 0 && c.m[en.key] == en {
		delete(c.m, en.key)
	}
}

// errBehind tells a stream that the entry no longer holds the output of
// its next frame, or is not yet at it.
var errBehind = errors.New("serve: the shared output is not at this frame")

// errForeign tells a stream that the entry was made for another turn of
// the same key (a window that forgot a turn, then saw a new one under its
// key): a frame it read differs from the stream's.
var errForeign = errors.New("serve: the shared output is another turn's")

// wantedFactor bounds the outputs an entry keeps because a holding stream
// still wants them: that many times the cache's limit, the newest aside.
const wantedFactor = 8

// output returns the output of f for o and whether it ends the stream,
// computed once for every stream: f is the next frame of o, which got
// every frame before it. A kept output is returned only for the very frame
// it was made from: the same stored bytes, by their fingerprint.
func (en *entry) output(e *Engine, o *output, f replay.Frame) ([]byte, bool, error) {
	en.mu.Lock()
	defer en.mu.Unlock()
	fp := maphash.Bytes(e.seed, f.Data) | 1 // never 0, the fingerprint of none
	if f.Seq == 1 {
		switch {
		case en.first == 0:
			en.first = fp
		case en.first != fp:
			return nil, false, errForeign
		}
	}
	switch {
	case f.Seq <= en.seq && f.Seq >= en.base && en.prints[f.Seq-en.base] != fp:
		return nil, false, errForeign
	case en.broken != nil:
		return nil, false, en.broken
	case en.doneAt != 0 && f.Seq > en.doneAt:
		return nil, true, nil // nothing after the end
	case f.Seq <= en.seq:
		if f.Seq < en.base {
			return nil, false, errBehind
		}
		en.wants[o] = f.Seq + 1
		return en.outs[f.Seq-en.base], f.Seq == en.doneAt, nil
	case f.Seq != en.seq+1:
		return nil, false, errBehind
	}
	out, err := transcode(en.codec, nil, f)
	if err != nil {
		en.broken = err
		return nil, false, err
	}
	en.seq = f.Seq
	en.wants[o] = f.Seq + 1
	en.outs = append(en.outs, out)
	en.prints = append(en.prints, fp)
	en.bytes += len(out)
	for len(en.outs) > 1 && en.bytes > e.cache.limit {
		if en.bytes-len(out) <= wantedFactor*e.cache.limit && en.wanted(en.base) {
			break
		}
		en.bytes -= len(en.outs[0])
		en.outs[0] = nil
		en.outs = en.outs[1:]
		en.prints = en.prints[1:]
		en.base++
	}
	if en.doneAt == 0 && en.codec.Done() {
		en.doneAt = f.Seq
	}
	return out, f.Seq == en.doneAt, nil
}

// wanted reports whether a holding stream asks for seq or an earlier one
// next.
func (en *entry) wanted(seq int64) bool {
	for _, next := range en.wants {
		if next <= seq {
			return true
		}
	}
	return false
}
