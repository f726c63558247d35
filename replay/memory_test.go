package replay

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/internal/kit/fakeclock"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func delta(key Key, seq int64, text string) *chatprotocol.ChatEventEnvelope {
	return &chatprotocol.ChatEventEnvelope{ConversationID: key.ConversationID, TurnID: key.TurnID,
		EventID: "e-" + strconv.FormatInt(seq, 10), Seq: seq, Event: &chatprotocol.DeltaEvent{Text: text}}
}

func lifecycle(key Key, seq int64, status chatprotocol.LifecycleStatus) *chatprotocol.ChatEventEnvelope {
	env := delta(key, seq, "")
	env.Event = &chatprotocol.LifecycleEvent{Status: status}
	return env
}

// appendDeltas appends deltas seq from..to to key's turn.
func appendDeltas(t *testing.T, m *Memory, key Key, from, to int64, text string) {
	t.Helper()
	for seq := from; seq <= to; seq++ {
		_, err := m.Append(t.Context(), key, delta(key, seq, text))
		require.NoError(t, err, "seq %d", seq)
	}
}

func bounds(t *testing.T, m *Memory, key Key) Bounds {
	t.Helper()
	b, _, err := m.Read(t.Context(), key, 0, math.MaxInt)
	if err != nil {
		ce, ok := errors.AsType[*CursorError](err)
		require.True(t, ok, "%v", err)
		assert.Equal(t, b, ce.Bounds, "Read returns the bounds its refusal carries")
	}
	return b
}

func TestMemoryDefaults(t *testing.T) {
	m := NewMemory(nil)
	assert.Equal(t, chatprotocol.DefaultMaxFrameBytes, m.maxFrameBytes)
	assert.Equal(t, DefaultMaxFrames, m.maxFrames)
	assert.Equal(t, DefaultMaxBytes, m.maxBytes)
	assert.Equal(t, int64(DefaultMaxAge), m.maxAge)
	assert.Equal(t, DefaultMaxTurns, m.maxTurns)
	assert.Equal(t, int64(DefaultEndedTTL), m.endedTTL)
	assert.Equal(t, DefaultMaxTombstones, m.maxTombstones)

	u := NewMemory(&MemoryOptions{MaxFrameBytes: -1, MaxFrames: -1, MaxBytes: -5, MaxAge: -1, MaxTurns: -1, EndedTTL: -1, MaxTombstones: -1})
	for _, v := range []int64{int64(u.maxFrameBytes), int64(u.maxFrames), int64(u.maxBytes), u.maxAge, int64(u.maxTurns), u.endedTTL, int64(u.maxTombstones)} {
		assert.Equal(t, int64(-1), v, "a negative option is no bound")
	}
	key := Key{"c", "t"}
	big := strings.Repeat("x", 2*chatprotocol.DefaultMaxFrameBytes)
	_, err := u.Append(t.Context(), key, delta(key, 1, big))
	require.NoError(t, err, "no frame limit")
	appendDeltas(t, u, key, 2, 20, "y")
	assert.Equal(t, Bounds{Latest: 20}, bounds(t, u, key), "no retention bound trims anything")
}

func TestMemoryCapabilitiesAreTheLightweightProfile(t *testing.T) {
	caps := NewMemory(nil).Capabilities()
	assert.Equal(t, chatprotocol.ChatCapabilities{ConnectionReplay: true}, caps)
	require.NoError(t, chatprotocol.RequireChatCapabilities(&caps, chatprotocol.CapabilityConnectionReplay))
	for _, c := range []chatprotocol.Capability{chatprotocol.CapabilityPersistedHistory, chatprotocol.CapabilityPersistedDecisions,
		chatprotocol.CapabilityCompletedToolCheckpoints, chatprotocol.CapabilityInterruptedTurnRecovery} {
		assert.ErrorIs(t, chatprotocol.RequireChatCapabilities(&caps, c), refusal.ErrUnsupportedCapability, "%s", c)
	}
}

func TestMemoryReadSharesTheStoredBytes(t *testing.T) {
	m := NewMemory(nil)
	key := Key{"c", "t"}
	env := delta(key, 1, "shared")
	f, err := m.Append(t.Context(), key, env)
	require.NoError(t, err)
	want, err := env.AppendJSON(nil)
	require.NoError(t, err)
	assert.Equal(t, want, f.Data)

	_, a, err := m.Read(t.Context(), key, 0, math.MaxInt)
	require.NoError(t, err)
	_, b, err := m.Read(t.Context(), key, 0, math.MaxInt)
	require.NoError(t, err)
	require.Len(t, a, 1)
	require.Len(t, b, 1)
	assert.Same(t, unsafe.SliceData(f.Data), unsafe.SliceData(a[0].Data), "Read hands out the stored bytes")
	assert.Same(t, unsafe.SliceData(a[0].Data), unsafe.SliceData(b[0].Data))
	assert.NotSame(t, unsafe.SliceData(a), unsafe.SliceData(b), "each Read returns its own slice of headers")
	a[0] = Frame{Seq: 99}
	_, c, err := m.Read(t.Context(), key, 0, math.MaxInt)
	require.NoError(t, err)
	assert.Equal(t, int64(1), c[0].Seq, "a caller changing its headers changes nothing stored")
}

func TestMemoryAppendRefusalsCarryBounds(t *testing.T) {
	m := NewMemory(&MemoryOptions{MaxFrameBytes: 200})
	key := Key{"c", "t"}
	appendDeltas(t, m, key, 1, 2, "a")
	b := Bounds{Latest: 2}

	_, err := m.Append(t.Context(), key, nil)
	ae, ok := errors.AsType[*AppendError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, AppendError{Seq: 0, Bounds: b, Err: ae.Err}, *ae)
	assert.Equal(t, refusal.CodeInvalidEnvelope, refusal.CodeOf(err))

	_, err = m.Append(t.Context(), key, delta(key, 3, strings.Repeat("x", 200)))
	ae, ok = errors.AsType[*AppendError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, int64(3), ae.Seq)
	assert.Equal(t, b, ae.Bounds)
	assert.ErrorIs(t, err, refusal.ErrFrameTooLarge)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = m.Append(ctx, key, delta(key, 3, "x"))
	assert.ErrorIs(t, err, context.Canceled)
	_, _, err = m.Read(ctx, key, 0, math.MaxInt)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, b, bounds(t, m, key), "nothing refused was stored")
}

func TestMemoryRetainsByCount(t *testing.T) {
	m := NewMemory(&MemoryOptions{MaxFrames: 3})
	key := Key{"c", "t"}
	appendDeltas(t, m, key, 1, 10, "a")
	b, frames, err := m.Read(t.Context(), key, 7, math.MaxInt)
	require.NoError(t, err)
	assert.Equal(t, Bounds{Lower: 7, Latest: 10}, b)
	require.Len(t, frames, 3)
	assert.Equal(t, []int64{8, 9, 10}, []int64{frames[0].Seq, frames[1].Seq, frames[2].Seq})
	tr := m.turns[key]
	assert.Len(t, tr.frames, 3)
	assert.Equal(t, len(frames[0].Data)+len(frames[1].Data)+len(frames[2].Data), tr.bytes)
}

func TestMemoryRetainsByBytesKeepingTheNewest(t *testing.T) {
	key := Key{"c", "t"}
	one, err := delta(key, 1, "aaaa").AppendJSON(nil)
	require.NoError(t, err)
	m := NewMemory(&MemoryOptions{MaxBytes: 3*len(one) + 1})
	appendDeltas(t, m, key, 1, 9, "aaaa")
	assert.Equal(t, Bounds{Lower: 6, Latest: 9}, bounds(t, m, key), "three frames of that size fit")
	assert.Equal(t, 3*len(one), m.turns[key].bytes)

	_, err = m.Append(t.Context(), key, delta(key, 10, strings.Repeat("b", 4*len(one))))
	require.NoError(t, err)
	b, frames, err := m.Read(t.Context(), key, 9, math.MaxInt)
	require.NoError(t, err)
	assert.Equal(t, Bounds{Lower: 9, Latest: 10}, b, "a frame larger than MaxBytes is kept alone")
	require.Len(t, frames, 1)
	assert.Equal(t, int64(10), frames[0].Seq)
}

func TestMemoryRetainsByAge(t *testing.T) {
	clock := fakeclock.New(t0)
	m := NewMemory(&MemoryOptions{MaxAge: time.Minute, Now: clock.Now})
	key := Key{"c", "t"}
	appendDeltas(t, m, key, 1, 2, "old")
	clock.Advance(30 * time.Second)
	appendDeltas(t, m, key, 3, 4, "newer")
	clock.Advance(31 * time.Second)
	b, frames, err := m.Read(t.Context(), key, 2, math.MaxInt)
	require.NoError(t, err)
	assert.Equal(t, Bounds{Lower: 2, Latest: 4}, b, "frames a minute old are no longer served")
	assert.Len(t, frames, 2)
	_, _, err = m.Read(t.Context(), key, 1, math.MaxInt)
	assert.ErrorIs(t, err, refusal.ErrStaleCursor)

	clock.Advance(30 * time.Second)
	assert.Equal(t, Bounds{Lower: 4, Latest: 4}, bounds(t, m, key), "all aged: Lower = Latest, no gap")
	appendDeltas(t, m, key, 5, 5, "goes on")
	b, frames, err = m.Read(t.Context(), key, 4, math.MaxInt)
	require.NoError(t, err)
	assert.Equal(t, Bounds{Lower: 4, Latest: 5}, b)
	require.Len(t, frames, 1)
	assert.Len(t, m.turns[key].frames, 1, "the aged frames were dropped on the append")
}

func TestMemorySweepsIdleTurnsIntoTombstones(t *testing.T) {
	clock := fakeclock.New(t0)
	m := NewMemory(&MemoryOptions{MaxAge: time.Minute, EndedTTL: 2 * time.Minute, Now: clock.Now})
	idle, done, other := Key{"c", "idle"}, Key{"c", "done"}, Key{"c", "other"}
	appendDeltas(t, m, idle, 1, 3, "x")
	appendDeltas(t, m, done, 1, 1, "x")
	_, err := m.Append(t.Context(), done, lifecycle(done, 2, chatprotocol.LifecycleCompleted))
	require.NoError(t, err)

	clock.Advance(time.Minute)
	appendDeltas(t, m, other, 1, 1, "x")
	assert.Equal(t, &m.tombs, m.turns[idle].in, "a live turn idle for MaxAge is evicted")
	assert.Nil(t, m.turns[idle].frames)
	assert.Equal(t, &m.ended, m.turns[done].in, "an ended turn is kept for EndedTTL")

	clock.Advance(time.Minute)
	assert.Equal(t, Bounds{Lower: 2, Latest: 2, Ended: true}, bounds(t, m, done), "past EndedTTL a Read sees the end only")
	appendDeltas(t, m, other, 2, 2, "x")
	assert.Equal(t, &m.tombs, m.turns[done].in)
	assert.Equal(t, Bounds{Lower: 2, Latest: 2, Ended: true}, bounds(t, m, done))
	assert.Equal(t, Bounds{Lower: 3, Latest: 3}, bounds(t, m, idle))
	appendDeltas(t, m, idle, 4, 4, "back")
	assert.Equal(t, Bounds{Lower: 3, Latest: 4}, bounds(t, m, idle), "the writer of an evicted live turn goes on at Latest+1")
}

func TestMemoryEvictsEndedTurnsFirstThenTheLeastRecentlyAppended(t *testing.T) {
	m := NewMemory(&MemoryOptions{MaxTurns: 2})
	a, b, c, d := Key{"c", "a"}, Key{"c", "b"}, Key{"c", "c"}, Key{"c", "d"}
	appendDeltas(t, m, a, 1, 2, "x")
	appendDeltas(t, m, b, 1, 1, "x")
	_, err := m.Append(t.Context(), b, lifecycle(b, 2, chatprotocol.LifecycleCancelled))
	require.NoError(t, err)
	appendDeltas(t, m, a, 3, 3, "x") // a is now the most recently appended, b ended

	appendDeltas(t, m, c, 1, 1, "x")
	assert.Equal(t, Bounds{Lower: 2, Latest: 2, Ended: true}, bounds(t, m, b), "the ended turn goes first, as a tombstone")
	assert.Equal(t, Bounds{Latest: 3}, bounds(t, m, a))

	appendDeltas(t, m, d, 1, 1, "x")
	assert.Equal(t, Bounds{Lower: 3, Latest: 3}, bounds(t, m, a), "then the least recently appended live turn")
	assert.Equal(t, Bounds{Latest: 1}, bounds(t, m, c))
	assert.Equal(t, 2, m.live.Len()+m.ended.Len())

	_, err = m.Append(t.Context(), b, delta(b, 3, "late"))
	assert.ErrorIs(t, err, refusal.ErrTurnTerminated, "a tombstone remembers the end")
}

func TestMemoryForgetsTombstonesBeyondTheBound(t *testing.T) {
	m := NewMemory(&MemoryOptions{MaxTurns: 1, MaxTombstones: 1})
	a, b, c := Key{"c", "a"}, Key{"c", "b"}, Key{"c", "c"}
	appendDeltas(t, m, a, 1, 2, "x")
	appendDeltas(t, m, b, 1, 1, "x")
	assert.Equal(t, Bounds{Lower: 2, Latest: 2}, bounds(t, m, a))
	appendDeltas(t, m, c, 1, 1, "x")
	assert.Equal(t, Bounds{Lower: 1, Latest: 1}, bounds(t, m, b))
	assert.Equal(t, Bounds{}, bounds(t, m, a), "the oldest tombstone is forgotten")
	assert.Len(t, m.turns, 2, "c resident, b a tombstone")
}

func TestMemoryWaitOnAnUnknownTurnLeavesNothingBehind(t *testing.T) {
	m := NewMemory(nil)
	key := Key{"c", "never"}
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_, err := m.Wait(ctx, key, 0)
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
	require.Eventually(t, func() bool {
		m.mu.RLock()
		defer m.mu.RUnlock()
		tr := m.turns[key]
		return tr != nil && tr.waiters.Load() == 10
	}, 5*time.Second, time.Millisecond)
	cancel()
	wg.Wait()
	assert.Empty(t, m.turns, "the last Wait removed the turn it waited on")
}

func TestMemoryWaitBlocksUntilAppendOrEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := NewMemory(nil)
		key := Key{"c", "t"}
		appendDeltas(t, m, key, 1, 1, "x")
		const waiters = 1000
		results := make(chan Bounds, waiters)
		for range waiters {
			go func() {
				b, err := m.Wait(t.Context(), key, 1)
				assert.NoError(t, err)
				results <- b
			}()
		}
		synctest.Wait()
		assert.Empty(t, results, "every Wait blocks, none polls")
		assert.Equal(t, int64(waiters), m.turns[key].waiters.Load())

		_, err := m.Append(t.Context(), key, lifecycle(key, 2, chatprotocol.LifecycleCompleted))
		require.NoError(t, err)
		synctest.Wait()
		require.Len(t, results, waiters, "one append wakes them all")
		for range waiters {
			assert.Equal(t, Bounds{Latest: 2, Ended: true}, <-results)
		}
		assert.Zero(t, m.turns[key].waiters.Load())
		assert.False(t, m.turns[key].waited.Load())
	})
}

func TestMemoryAppendWithoutWaitersKeepsItsChannel(t *testing.T) {
	m := NewMemory(nil)
	key := Key{"c", "t"}
	appendDeltas(t, m, key, 1, 1, "x")
	ch := m.turns[key].ch
	appendDeltas(t, m, key, 2, 5, "x")
	assert.Equal(t, ch, m.turns[key].ch, "no Wait, no new channel")
}

func TestMemoryRefusesAFrameTheReaderWouldRefuse(t *testing.T) {
	m := NewMemory(nil)
	key := Key{"c", "t"}
	big := delta(key, 1, strings.Repeat("x", 1_200_000))
	_, err := m.Append(t.Context(), key, big)
	assert.ErrorIs(t, err, refusal.ErrFrameTooLarge, "1.2 MB is over the default 1 MiB")
	data, err := big.AppendJSON(nil)
	require.NoError(t, err)
	_, err = chatprotocol.NewEnvelopeParser(nil).Parse(data)
	assert.ErrorIs(t, err, refusal.ErrFrameTooLarge, "the reader's default limit is the same")
	assert.Equal(t, Bounds{}, bounds(t, m, key))
}

// TestMemoryUnderChurn: writers on more turns than MaxTurns, readers and
// waiters on them all, with tombstones forgotten; under -race this covers
// eviction, revival and the removal of waited-on turns. Every answer keeps
// the window's promises: a refusal carries the bounds, a suffix is
// contiguous up to Latest.
func TestMemoryUnderChurn(t *testing.T) {
	m := NewMemory(&MemoryOptions{MaxTurns: 3, MaxTombstones: 2, MaxFrames: 8})
	keys := make([]Key, 8)
	for i := range keys {
		keys[i] = Key{"c", "t" + strconv.Itoa(i)}
	}
	ctx, cancel := context.WithCancel(t.Context())
	var writers, readers sync.WaitGroup
	for _, key := range keys {
		writers.Go(func() {
			var seq int64
			for range 300 {
				b, _, _ := m.Read(ctx, key, 0, math.MaxInt)
				seq = int64(b.Latest) + 1 // a forgotten turn starts again at 1
				if _, err := m.Append(ctx, key, delta(key, seq, "x")); err != nil {
					assert.Equal(t, refusal.CodeSequenceGap, refusal.CodeOf(err), "the turn was forgotten between the writer's Read and its Append")
				}
			}
		})
		for range 3 {
			readers.Go(func() {
				var c int64
				for ctx.Err() == nil {
					b, frames, err := m.Read(ctx, key, c, math.MaxInt)
					if ce, ok := errors.AsType[*CursorError](err); ok {
						assert.Equal(t, b, ce.Bounds)
						c = b.Lower
						continue
					}
					if err != nil {
						return
					}
					for i, f := range frames {
						assert.Equal(t, c+1+int64(i), f.Seq)
					}
					if len(frames) > 0 {
						assert.Equal(t, b.Latest, frames[len(frames)-1].Seq)
					}
					c = b.Latest
					wctx, wcancel := context.WithTimeout(ctx, time.Millisecond)
					_, _ = m.Wait(wctx, key, c)
					wcancel()
				}
			})
		}
	}
	writers.Wait()
	cancel()
	readers.Wait()
	m.mu.RLock()
	defer m.mu.RUnlock()
	assert.LessOrEqual(t, m.live.Len()+m.ended.Len(), 3)
	assert.LessOrEqual(t, m.tombs.Len(), 2)
	for key, tr := range m.turns {
		assert.Zero(t, tr.waiters.Load(), "%v", key)
		assert.NotNil(t, tr.in, "no waiter left, so every turn in the map is resident or a tombstone: %v", key)
	}
}
