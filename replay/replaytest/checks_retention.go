package replaytest

import (
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// checkRetention, with Config.NewRetaining only: a window retaining the
// newest few frames of a turn reports after each append Lower = Latest -
// retained (0 until it trims), serves Lower+1 through Latest with no gap
// after Lower, refuses Lower-1 as stale-cursor with the bounds, and lets a
// Wait below Lower return at once (the reader's next Read is refused).
func checkRetention(r *run) error {
	if r.cfg.NewRetaining == nil {
		return errSkip
	}
	const keep, n = 4, 11
	if err := r.open(r.cfg.NewRetaining(r.ctx, keep)); err != nil {
		return err
	}
	key := r.key("retention")
	var want [][]byte
	for seq := int64(1); seq <= n; seq++ {
		data, err := r.appendTurn(key, seq, turnEvents(int(seq))[seq-1])
		if err != nil {
			return err
		}
		want = append(want, data...)
		b := replay.Bounds{Lower: seq - min(seq, keep), Latest: seq}
		if err := r.readExpect(key, b.Lower, b, 1, want); err != nil {
			return failf("retaining %d, after seq %d: %w", keep, seq, err)
		}
		if got, err := r.w.Bounds(r.ctx, key); err != nil || got != b {
			return failf("retaining %d, after seq %d: Bounds %v, %v; want %v", keep, seq, got, err, b)
		}
		if b.Lower == 0 {
			continue
		}
		for _, stale := range []int64{b.Lower - 1, 0} {
			if err := r.readRefused(key, stale, refusal.ErrStaleCursor, b); err != nil {
				return failf("retaining %d, after seq %d: %w", keep, seq, err)
			}
		}
		if got, err := r.waitReturns(key, b.Lower-1); err != nil || got != b {
			return failf("retaining %d: Wait below Lower: %v, %v; want %v at once", keep, got, err, b)
		}
	}
	return nil
}
