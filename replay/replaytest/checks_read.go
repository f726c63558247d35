package replaytest

import (
	"bytes"
	"math"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// checkEmptyTurn: a turn never appended to is (0, 0), not ended; Read(0)
// returns nothing, Read(1) is cursor-ahead with those bounds, and Wait
// blocks until the first frame.
func checkEmptyTurn(r *run) error {
	key := r.key("empty")
	if err := r.readExpect(key, 0, replay.Bounds{}, 1, nil); err != nil {
		return err
	}
	if err := r.readRefused(key, 1, refusal.ErrCursorAhead, replay.Bounds{}); err != nil {
		return failf("an empty turn: %w", err)
	}
	return r.waitBlocks(key, 0)
}

// checkAppendRead: frames 1..N appended are read back after every cursor
// k as exactly k+1..N, in order, with their canonical bytes; Read(N) gives
// nothing.
func checkAppendRead(r *run) error {
	const n = 30
	key := r.key("append-read")
	want, err := r.appendTurn(key, 1, turnEvents(n)...)
	if err != nil {
		return err
	}
	b := replay.Bounds{Lower: 0, Latest: n}
	for k := int64(0); k <= n; k++ {
		if err := r.readExpect(key, k, b, 1, want); err != nil {
			return err
		}
	}
	return nil
}

// checkCursorAhead: a cursor beyond Latest is refused as cursor-ahead with
// the bounds and the cursor.
func checkCursorAhead(r *run) error {
	key := r.key("cursor-ahead")
	if _, err := r.appendTurn(key, 1, turnEvents(3)...); err != nil {
		return err
	}
	for _, after := range []int64{4, 5, 1 << 40} {
		if err := r.readRefused(key, after, refusal.ErrCursorAhead, replay.Bounds{Latest: 3}); err != nil {
			return failf("a turn at 3: %w", err)
		}
	}
	return nil
}

// checkReadPages: a Read with a byte limit returns one page: from any
// cursor below Latest at least one frame, contiguous from the cursor, whose
// Data take at most the limit unless the page is one frame; page after page
// gives the whole suffix. Bounds reports the turn's bounds, (0, 0) for an
// unknown turn.
func checkReadPages(r *run) error {
	const n = 40
	key := r.key("read-pages")
	if b, err := r.w.Bounds(r.ctx, key); err != nil || b != (replay.Bounds{}) {
		return failf("Bounds of an unknown turn: %v, %v; want (0, 0]", b, err)
	}
	want, err := r.appendTurn(key, 1, turnEvents(n)...)
	if err != nil {
		return err
	}
	b := replay.Bounds{Latest: n}
	if got, err := r.w.Bounds(r.ctx, key); err != nil || got != b {
		return failf("Bounds: %v, %v; want %v", got, err, b)
	}
	for _, limit := range []int{-1, 0, 1, len(want[1]), 3*len(want[1]) + 7, 4096, math.MaxInt} {
		for start := int64(0); start < n; start += 9 {
			for c := start; c < n; {
				got, frames, err := r.w.Read(r.ctx, key, c, limit)
				switch {
				case err != nil:
					return failf("Read after %d, limit %d: %w", c, limit, err)
				case got != b:
					return failf("Read after %d, limit %d: bounds %v, want %v", c, limit, got, b)
				case len(frames) == 0:
					return failf("Read after %d, limit %d: no frame below the latest %d", c, limit, n)
				}
				size := 0
				for _, f := range frames {
					if f.Seq != c+1 || !bytes.Equal(f.Data, want[f.Seq-1]) {
						return failf("Read after %d, limit %d: seq %d is not the frame after %d as appended", start, limit, f.Seq, c)
					}
					size += len(f.Data)
					c = f.Seq
				}
				if len(frames) > 1 && size > max(limit, 1) {
					return failf("Read after %d, limit %d: a page of %d frames holds %d bytes", c, limit, len(frames), size)
				}
			}
		}
	}
	return nil
}
