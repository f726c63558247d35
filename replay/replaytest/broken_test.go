package replaytest_test

import (
	"context"
	"math"
	"sync"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The known-broken windows: each wraps a replay.Memory and adds one
// defect, which the kit must catch. Never use one for anything else.

// lostWakeup registers its Wait for the next append, without first
// checking what was appended after the cursor: a frame appended between a
// reader's Read and its Wait is lost until another frame follows.
type lostWakeup struct{ replay.Window }

func (w lostWakeup) Wait(ctx context.Context, key replay.Key, after int64) (replay.Bounds, error) {
	b, _, _ := w.Window.Read(ctx, key, after, 1) // the bounds come with a refusal too
	if b.Ended {
		return b, nil
	}
	return w.Window.Wait(ctx, key, max(after, b.Latest))
}

// turnKeyed keys its reads by turn id only: it serves the turn of
// whichever conversation appended last to that turn id.
type turnKeyed struct {
	replay.Window
	mu   sync.Mutex
	last map[string]replay.Key
}

func newTurnKeyed() *turnKeyed {
	return &turnKeyed{Window: replay.NewMemory(nil), last: make(map[string]replay.Key)}
}

func (w *turnKeyed) Append(ctx context.Context, key replay.Key, env *chatprotocol.ChatEventEnvelope) (replay.Frame, error) {
	f, err := w.Window.Append(ctx, key, env)
	if err == nil {
		w.mu.Lock()
		w.last[key.TurnID] = key
		w.mu.Unlock()
	}
	return f, err
}

func (w *turnKeyed) resolve(key replay.Key) replay.Key {
	w.mu.Lock()
	defer w.mu.Unlock()
	if k, ok := w.last[key.TurnID]; ok {
		return k
	}
	return key
}

func (w *turnKeyed) Read(ctx context.Context, key replay.Key, after int64, limit int) (replay.Bounds, []replay.Frame, error) {
	return w.Window.Read(ctx, w.resolve(key), after, limit)
}

func (w *turnKeyed) Bounds(ctx context.Context, key replay.Key) (replay.Bounds, error) {
	return w.Window.Bounds(ctx, w.resolve(key))
}

func (w *turnKeyed) Wait(ctx context.Context, key replay.Key, after int64) (replay.Bounds, error) {
	return w.Window.Wait(ctx, w.resolve(key), after)
}

// lowerOffByOne reports as Lower the seq of the oldest retained frame
// rather than that seq minus one, and refuses cursors below it: the cursor
// just below is refused although its suffix is all there.
type lowerOffByOne struct{ replay.Window }

func shift(b replay.Bounds) replay.Bounds {
	if b.Latest > b.Lower {
		b.Lower++
	}
	return b
}

func (w lowerOffByOne) Read(ctx context.Context, key replay.Key, after int64, limit int) (replay.Bounds, []replay.Frame, error) {
	b, frames, err := w.Window.Read(ctx, key, after, limit)
	b = shift(b)
	if err == nil {
		err = replay.CheckCursor(b, after)
	}
	if err != nil {
		return b, nil, err
	}
	return b, frames, nil
}

func (w lowerOffByOne) Bounds(ctx context.Context, key replay.Key) (replay.Bounds, error) {
	b, err := w.Window.Bounds(ctx, key)
	return shift(b), err
}

func (w lowerOffByOne) Wait(ctx context.Context, key replay.Key, after int64) (replay.Bounds, error) {
	b, err := w.Window.Wait(ctx, key, after)
	return shift(b), err
}

// wholeSuffix ignores Read's limit and returns the whole suffix after the
// cursor, however large: a reader far behind holds the whole turn.
type wholeSuffix struct{ replay.Window }

func (w wholeSuffix) Read(ctx context.Context, key replay.Key, after int64, _ int) (replay.Bounds, []replay.Frame, error) {
	return w.Window.Read(ctx, key, after, math.MaxInt)
}

// boundsAtCursorZero answers Bounds with a Read after cursor 0, which is
// refused once retention has moved Lower: the bounds come with the refusal,
// and the refusal is returned too.
type boundsAtCursorZero struct{ replay.Window }

func (w boundsAtCursorZero) Bounds(ctx context.Context, key replay.Key) (replay.Bounds, error) {
	b, _, err := w.Window.Read(ctx, key, 0, 1)
	return b, err
}
