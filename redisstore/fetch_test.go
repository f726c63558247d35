package redisstore

import (
	"slices"
	"strings"
	"testing"

	"github.com/Papercusp/chat-protocol-go/replay"
)

// framesOf returns frames from..to, each of data n bytes, its byte the
// seq's last digit, or tag's first byte when tag is set.
func framesOf(from, to int64, n int, tag string) []replay.Frame {
	var out []replay.Frame
	for s := from; s <= to; s++ {
		c := string(rune('0' + s%10))
		if tag != "" {
			c = tag[:1]
		}
		out = append(out, replay.Frame{Seq: s, Type: "delta", Data: []byte(strings.Repeat(c, n))})
	}
	return out
}

// seqsOf returns the seqs of p's frames.
func seqsOf(p page) []int64 {
	var s []int64
	for _, f := range p.frames {
		s = append(s, f.Seq)
	}
	return s
}

// TestKeptFrames serves pages from a turn's kept frames only where a read
// would return the same page: the frame after the cursor kept, the page
// ending at the bounds' Latest or before a frame that does not fit, and
// nothing newer known of the turn.
func TestKeptFrames(t *testing.T) {
	var tr turnReads
	b := replay.Bounds{Lower: 0, Latest: 5}
	tr.known = 5
	tr.cache.b = b
	tr.cache.add(framesOf(1, 5, 10, ""), b)
	for _, c := range []struct {
		after int64
		limit int
		want  []int64 // nil: not served
	}{
		{0, 1 << 20, []int64{1, 2, 3, 4, 5}},
		{2, 1 << 20, []int64{3, 4, 5}},
		{2, 25, []int64{3, 4}},
		{2, 1, []int64{3}},
		{5, 1 << 20, nil}, // at Latest: the read answers
		{-1, 1 << 20, nil},
	} {
		p, ok := tr.cached(c.after, c.limit)
		if got := seqsOf(p); ok != (c.want != nil) || (ok && (p.b != b || !slices.Equal(got, c.want))) {
			t.Errorf("after %d, limit %d: %v %v, %v; want %v", c.after, c.limit, ok, got, p.b, c.want)
		}
	}
	// Something newer is known: nothing is served.
	tr.known = 6
	if _, ok := tr.cached(2, 1<<20); ok {
		t.Error("served while frame 6 is known")
	}
	// The bounds run past the kept frames: only a page cut by its limit.
	tr.cache.b = replay.Bounds{Lower: 2, Latest: 7}
	if p, ok := tr.cached(2, 1<<20); ok {
		t.Errorf("served %v, short of Latest 7", seqsOf(p))
	}
	if p, ok := tr.cached(2, 15); !ok || !slices.Equal(seqsOf(p), []int64{3}) {
		t.Errorf("limit 15: %v, %v; want [3]", ok, seqsOf(p))
	}
	if _, ok := tr.cached(1, 15); ok {
		t.Error("served a cursor below Lower")
	}
}

// TestKeptFramesAdd keeps consecutive frames: a read that follows on
// extends them, one after a gap or with other bytes at a kept seq replaces
// them, and the oldest go beyond cacheBytes or below Lower.
func TestKeptFramesAdd(t *testing.T) {
	var fc frameCache
	fc.add(framesOf(1, 3, 10, ""), replay.Bounds{Latest: 3})
	fc.add(framesOf(2, 5, 10, ""), replay.Bounds{Latest: 5})
	if got := seqsOf(page{frames: fc.frames}); !slices.Equal(got, []int64{1, 2, 3, 4, 5}) || fc.bytes != 50 {
		t.Fatalf("extended: %v, %d bytes", got, fc.bytes)
	}
	fc.add(framesOf(4, 6, 10, "x"), replay.Bounds{Latest: 6})
	if got := seqsOf(page{frames: fc.frames}); !slices.Equal(got, []int64{4, 5, 6}) || string(fc.frames[0].Data[:1]) != "x" {
		t.Fatalf("other bytes at 4 and 5: %v", got)
	}
	fc.add(framesOf(9, 9, 10, ""), replay.Bounds{Latest: 9})
	if got := seqsOf(page{frames: fc.frames}); !slices.Equal(got, []int64{9}) || fc.bytes != 10 {
		t.Fatalf("after a gap: %v, %d bytes", got, fc.bytes)
	}
	fc.add(framesOf(10, 12, 10, ""), replay.Bounds{Lower: 10, Latest: 12})
	if got := seqsOf(page{frames: fc.frames}); !slices.Equal(got, []int64{11, 12}) {
		t.Fatalf("Lower 10: %v", got)
	}
	fc.add(framesOf(13, 14, cacheBytes/2, ""), replay.Bounds{Lower: 10, Latest: 14})
	if got := seqsOf(page{frames: fc.frames}); !slices.Equal(got, []int64{13, 14}) || fc.bytes != cacheBytes {
		t.Fatalf("beyond %d bytes: %v, %d bytes", cacheBytes, got, fc.bytes)
	}
}
