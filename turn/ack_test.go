package turn_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// fault is what a lossy window does with one Append.
type fault int

const (
	ok      fault = iota
	ackLost       // stores the frame, then fails as a broken connection would
	before        // fails without storing
)

var errLink = errors.New("connection reset by peer")

// lossy is a window whose Appends fail as scripted, and whose Bounds
// fail while boundsDown is above 0.
type lossy struct {
	replay.Window
	mu         sync.Mutex
	script     []fault
	boundsDown int
	appends    int
}

func (l *lossy) Append(ctx context.Context, k replay.Key, env *chatprotocol.ChatEventEnvelope) (replay.Frame, error) {
	l.mu.Lock()
	f := ok
	if len(l.script) > 0 {
		f, l.script = l.script[0], l.script[1:]
	}
	l.appends++
	l.mu.Unlock()
	switch f {
	case before:
		return replay.Frame{}, errLink
	case ackLost:
		if _, err := l.Window.Append(ctx, k, env); err != nil {
			return replay.Frame{}, err
		}
		return replay.Frame{}, errLink
	}
	return l.Window.Append(ctx, k, env)
}

func (l *lossy) Bounds(ctx context.Context, k replay.Key) (replay.Bounds, error) {
	l.mu.Lock()
	down := l.boundsDown > 0
	if down {
		l.boundsDown--
	}
	l.mu.Unlock()
	if down {
		return replay.Bounds{}, errLink
	}
	return l.Window.Bounds(ctx, k)
}

func (l *lossy) fail(script ...fault) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.script = append(l.script, script...)
}

// texts is the text of each delta of envs, in seq order.
func texts(envs []chatprotocol.ChatEventEnvelope) []string {
	var out []string
	for _, e := range envs {
		if d, ok := e.Event.(*chatprotocol.DeltaEvent); ok {
			out = append(out, d.Text)
		}
	}
	return out
}

// An append whose acknowledgement is lost landed: the bounds say so and it
// is not appended again. One that failed before storing is appended again.
// Either way the stream has no gap and no duplicate.
func TestUncertainAppends(t *testing.T) {
	for _, tc := range []struct {
		name    string
		script  []fault
		appends int // Append calls for the last two deltas
	}{
		{"ack lost", []fault{ackLost}, 2},
		{"failed before storing", []fault{before}, 3},
		{"failed, then ack lost on the second attempt", []fault{before, ackLost}, 3},
		{"failed twice", []fault{before, before}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			w := &lossy{Window: replay.NewMemory(nil)}
			h := newHostOn(t, w)
			p := h.start("t-1")
			require.NoError(t, p.Delta(ctx, "one "))
			w.fail(tc.script...)
			w.appends = 0
			require.NoError(t, p.Delta(ctx, "two "))
			require.NoError(t, p.Delta(ctx, "three"))
			assert.Equal(t, tc.appends, w.appends)
			envs := h.envelopes("t-1")
			assert.Equal(t, []string{"one ", "two ", "three"}, texts(envs))
			assert.Equal(t, int64(4), p.Latest())
		})
	}
}

// When the bounds cannot be read either, the call returns ErrUnsettled and
// the Producer settles that envelope, once, before the next one; a caller
// that does not send it again gets every text exactly once.
func TestUnsettledAppendIsSettledByTheNextCall(t *testing.T) {
	for _, f := range []fault{ackLost, before} {
		t.Run(fmt.Sprint(f), func(t *testing.T) {
			ctx := t.Context()
			w := &lossy{Window: replay.NewMemory(nil)}
			h := newHostOn(t, w)
			p := h.start("t-1")
			w.fail(f)
			w.boundsDown = 1
			err := p.Delta(ctx, "one ")
			require.ErrorIs(t, err, turn.ErrUnsettled)
			assert.ErrorIs(t, err, errLink)
			require.NoError(t, p.Delta(ctx, "two"))
			require.NoError(t, p.Complete(ctx))
			assert.Equal(t, []string{"one ", "two"}, texts(h.envelopes("t-1")))

			// Flush settles without appending anything else.
			p2 := h.start("t-2")
			w.fail(f)
			w.boundsDown = 1
			require.ErrorIs(t, p2.Delta(ctx, "solo"), turn.ErrUnsettled)
			require.NoError(t, p2.Flush(ctx))
			require.NoError(t, p2.Flush(ctx))
			assert.Equal(t, []string{"solo"}, texts(h.envelopes("t-2")))
		})
	}
}

// An envelope whose appends keep failing is kept after three attempts and
// lands, once, with the next call.
func TestAppendAttemptsAreBounded(t *testing.T) {
	ctx := t.Context()
	w := &lossy{Window: replay.NewMemory(nil)}
	h := newHostOn(t, w)
	p := h.start("t-1")
	w.fail(before, before, before)
	require.ErrorIs(t, p.Delta(ctx, "one "), turn.ErrUnsettled)
	require.NoError(t, p.Delta(ctx, "two"))
	assert.Equal(t, []string{"one ", "two"}, texts(h.envelopes("t-1")))
}

// An End whose lifecycle is unsettled is settled by End again: one
// terminal lifecycle.
func TestUnsettledEnd(t *testing.T) {
	ctx := t.Context()
	w := &lossy{Window: replay.NewMemory(nil)}
	h := newHostOn(t, w)
	p := h.start("t-1")
	w.fail(ackLost)
	w.boundsDown = 1
	require.ErrorIs(t, p.Complete(ctx), turn.ErrUnsettled)
	require.NoError(t, p.Complete(ctx))
	assert.Equal(t, []string{"lifecycle", "lifecycle"}, types(h.envelopes("t-1")))
}

// A frame another writer appended is never overwritten nor duplicated:
// the Producer stops with ErrAnotherWriter, also after a lost
// acknowledgement.
func TestAnotherWriter(t *testing.T) {
	ctx := t.Context()
	h := newHost(t)
	p := h.start("t-1")
	_, err := h.window.Append(ctx, key, &chatprotocol.ChatEventEnvelope{ConversationID: conversation, TurnID: "t-1",
		EventID: "intruder", Seq: 2, Event: &chatprotocol.DeltaEvent{Text: "x"}})
	require.NoError(t, err)
	require.ErrorIs(t, p.Delta(ctx, "mine"), turn.ErrAnotherWriter)
	require.ErrorIs(t, p.Complete(ctx), turn.ErrAnotherWriter)
	assert.Len(t, h.envelopes("t-1"), 2)

	w := &lossy{Window: replay.NewMemory(nil)}
	h = newHostOn(t, w)
	p = h.start("t-1")
	w.fail(before)
	w.Window = &intruding{Window: w.Window}
	require.ErrorIs(t, p.Delta(ctx, "mine"), turn.ErrAnotherWriter)
}

// intruding appends another writer's frame on the first Bounds.
type intruding struct {
	replay.Window
	once sync.Once
}

func (i *intruding) Bounds(ctx context.Context, k replay.Key) (replay.Bounds, error) {
	i.once.Do(func() {
		b, _ := i.Window.Bounds(ctx, k)
		_, _ = i.Window.Append(ctx, k, &chatprotocol.ChatEventEnvelope{ConversationID: k.ConversationID, TurnID: k.TurnID,
			EventID: "intruder", Seq: b.Latest + 1, Event: &chatprotocol.DeltaEvent{Text: "x"}})
	})
	return i.Window.Bounds(ctx, k)
}
