package recovery_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func frame(seq uint64) recovery.Frame {
	return recovery.Frame{Conversation: turn.Conversation, Turn: turn.Turn, Seq: seq, Payload: []byte{byte(seq)}}
}

func TestResume(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, nil, nil)
	rec, _ := e.worker()

	w, frames, err := rec.Resume(ctx, caller, turn, 0)
	require.NoError(t, err)
	assert.Equal(t, recovery.Window{}, w, "an empty window still reports its bounds")
	assert.Empty(t, frames)

	for seq := uint64(1); seq <= 6; seq++ {
		e.host.Append(frame(seq))
	}
	e.host.Prune(turn, 2)
	w, frames, err = rec.Resume(ctx, caller, turn, 3)
	require.NoError(t, err)
	assert.Equal(t, recovery.Window{Lower: 2, Latest: 6}, w)
	require.Len(t, frames, 3)
	assert.Equal(t, []byte{4}, frames[0].Payload)

	_, frames, err = rec.Resume(ctx, caller, turn, 6)
	require.NoError(t, err)
	assert.Empty(t, frames, "a cursor at the latest returns nothing")

	w, _, err = rec.Resume(ctx, caller, turn, 1)
	require.ErrorIs(t, err, refusal.ErrStaleCursor)
	assert.Equal(t, recovery.Window{Lower: 2, Latest: 6}, w)
	_, _, err = rec.Resume(ctx, caller, turn, 7)
	require.ErrorIs(t, err, refusal.ErrCursorAhead)

	e.host.Prune(turn, 6)
	w, frames, err = rec.Resume(ctx, caller, turn, 6)
	require.NoError(t, err)
	assert.Equal(t, recovery.Window{Lower: 6, Latest: 6}, w, "all pruned: empty, bounds kept")
	assert.Empty(t, frames)

	_, _, err = rec.Resume(ctx, "mallory", turn, 0)
	require.ErrorIs(t, err, refusal.ErrUnauthorized)
	_, _, err = rec.Resume(ctx, caller, recovery.TurnRef{}, 0)
	require.ErrorIs(t, err, refusal.ErrInvalidTurn)
}

func TestResumeSources(t *testing.T) {
	ctx := t.Context()
	e := newEnv(t, nil, nil)
	noReplay := recovery.New(recovery.Host{Authorizer: e.host}, nil)
	_, _, err := noReplay.Resume(ctx, caller, turn, 0)
	require.ErrorIs(t, err, refusal.ErrStoreUnavailable)

	failing := recovery.New(recovery.Host{Authorizer: e.host, Replay: recovery.ReplayFunc(
		func(context.Context, recovery.TurnRef, uint64) (recovery.Window, []recovery.Frame, error) {
			return recovery.Window{}, nil, errors.New("buffer gone")
		})}, nil)
	_, _, err = failing.Resume(ctx, caller, turn, 0)
	require.ErrorIs(t, err, refusal.ErrStoreUnavailable)

	coded := recovery.New(recovery.Host{Authorizer: e.host, Replay: recovery.ReplayFunc(
		func(context.Context, recovery.TurnRef, uint64) (recovery.Window, []recovery.Frame, error) {
			return recovery.Window{Lower: 5, Latest: 9}, nil, &refusal.Error{Code: refusal.CodeStaleCursor}
		})}, nil)
	w, _, err := coded.Resume(ctx, caller, turn, 0)
	require.ErrorIs(t, err, refusal.ErrStaleCursor, "a coded refusal of the source passes through")
	assert.Equal(t, uint64(9), w.Latest)

	lying := recovery.New(recovery.Host{Authorizer: e.host, Replay: recovery.ReplayFunc(
		func(context.Context, recovery.TurnRef, uint64) (recovery.Window, []recovery.Frame, error) {
			return recovery.Window{Lower: 0, Latest: 3}, []recovery.Frame{frame(1), frame(3)}, nil
		})}, nil)
	_, frames, err := lying.Resume(ctx, caller, turn, 0)
	require.ErrorIs(t, err, refusal.ErrSequenceGap)
	assert.Nil(t, frames, "a refused suffix is not returned")
}

// FuzzValidateReplay checks ValidateReplay against a plain reference: it
// never panics, and it accepts exactly the answers whose frames are this
// turn's seqs cursor+1 … Latest in order, within the window.
func FuzzValidateReplay(f *testing.F) {
	f.Add(uint64(3), uint64(3), uint64(7), []byte{4, 5, 6, 7}, []byte{0, 0, 0, 0})
	f.Add(uint64(2), uint64(3), uint64(7), []byte{3, 4}, []byte{0, 0})
	f.Add(uint64(8), uint64(3), uint64(7), []byte{}, []byte{})
	f.Add(uint64(3), uint64(3), uint64(7), []byte{4, 6, 7}, []byte{0, 0, 0})
	f.Add(uint64(3), uint64(3), uint64(7), []byte{4, 5, 5, 6, 7}, []byte{0, 0, 0, 0, 0})
	f.Add(uint64(5), uint64(3), uint64(7), []byte{6, 7}, []byte{0, 1})
	f.Add(uint64(0), uint64(0), uint64(0), []byte{}, []byte{})
	f.Add(uint64(1), uint64(5), uint64(4), []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, cursor, lower, latest uint64, seqs, owners []byte) {
		frames := make([]recovery.Frame, len(seqs))
		for i, s := range seqs {
			frames[i] = recovery.Frame{Conversation: turn.Conversation, Turn: turn.Turn, Seq: uint64(s)}
			if i < len(owners) && owners[i]%3 == 1 {
				frames[i].Turn = "other"
			} else if i < len(owners) && owners[i]%3 == 2 {
				frames[i].Conversation = "other"
			}
		}
		w := recovery.Window{Lower: lower, Latest: latest}
		err := recovery.ValidateReplay(turn, cursor, w, frames)

		ok := lower <= latest && lower <= cursor && cursor <= latest && uint64(len(frames)) == latest-cursor
		for i, fr := range frames {
			ok = ok && fr.Conversation == turn.Conversation && fr.Turn == turn.Turn && fr.Seq == cursor+1+uint64(i)
		}
		if ok != (err == nil) {
			t.Fatalf("ValidateReplay(%d, %+v, %v) = %v, reference says ok=%v", cursor, w, frames, err, ok)
		}
		if err != nil {
			we, isWindow := errors.AsType[*recovery.WindowError](err)
			if !isWindow || we.Window != w || we.Cursor != cursor || refusal.CodeOf(err) == "" {
				t.Fatalf("refusal %v does not carry the window", err)
			}
		}
	})
}
