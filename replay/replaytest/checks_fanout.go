package replaytest

import (
	"bytes"
	"context"
	"errors"
	"sync"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// checkFanOut: Config.Readers readers follow a turn that one writer
// appends to, half of them from before the first frame, half joining
// midway, each with the reader loop of package replay (Read, send, Wait,
// Read); every reader sees every frame exactly once, in order, with its
// canonical bytes, and stops at the end. The whole check is given Timeout.
func checkFanOut(r *run) error {
	const frames = 120
	key := r.key("fan-out")
	evs := append(turnEvents(frames-1), &chatprotocol.LifecycleEvent{Status: chatprotocol.LifecycleCompleted})
	envs := make([]*chatprotocol.ChatEventEnvelope, frames)
	want := make([][]byte, frames)
	for i, ev := range evs {
		envs[i] = envelope(key, int64(i+1), ev)
		var err error
		if want[i], err = canonical(envs[i]); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(r.ctx, r.cfg.Timeout)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) < 5 {
			errs = append(errs, err)
		}
	}
	start := func(n int) {
		for range n {
			wg.Go(func() {
				if err := follow(ctx, r.w, key, want); err != nil {
					fail(err)
				}
			})
		}
	}
	start(r.cfg.Readers / 2)
	for i, env := range envs {
		if i == frames/2 {
			start(r.cfg.Readers - r.cfg.Readers/2)
		}
		if _, err := r.w.Append(ctx, key, env); err != nil {
			fail(failf("writer: Append of seq %d: %w", env.Seq, err))
			cancel()
			break
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// fanOutPage is the page limit of checkFanOut's readers, in bytes: a few
// frames, so that the readers page through what they missed.
const fanOutPage = 1000

// follow is one reader of checkFanOut: the reader loop from cursor 0 to the
// end, checking that the frames are want, once each, in order.
func follow(ctx context.Context, w replay.Window, key replay.Key, want [][]byte) error {
	var c int64
	for {
		b, frames, err := w.Read(ctx, key, c, fanOutPage)
		if err != nil {
			return failf("reader at %d: Read: %w", c, err)
		}
		for _, f := range frames {
			switch {
			case f.Seq != c+1:
				return failf("reader at %d: got seq %d (a gap or a duplicate)", c, f.Seq)
			case f.Seq > int64(len(want)) || !bytes.Equal(f.Data, want[f.Seq-1]):
				return failf("reader at %d: seq %d is %s, not the envelope appended", c, f.Seq, f.Data)
			}
			c = f.Seq
		}
		if c < b.Latest {
			if len(frames) == 0 {
				return failf("reader at %d: Read returned no frame below the latest of bounds %v", c, b)
			}
			continue // the next page
		}
		if c != b.Latest {
			return failf("reader at %d: Read returned frames up to %d of bounds %v", c, c, b)
		}
		if b.Ended {
			break
		}
		if _, err := w.Wait(ctx, key, c); err != nil {
			return failf("reader at %d: Wait: %w", c, err)
		}
	}
	if c != int64(len(want)) {
		return failf("reader stopped at %d of %d", c, len(want))
	}
	return nil
}
