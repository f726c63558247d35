package replaytest

import (
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
	for k := uint64(0); k <= n; k++ {
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
	for _, after := range []uint64{4, 5, 1 << 40} {
		if err := r.readRefused(key, after, refusal.ErrCursorAhead, replay.Bounds{Latest: 3}); err != nil {
			return failf("a turn at 3: %w", err)
		}
	}
	return nil
}
