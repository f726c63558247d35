package replay

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

func TestCheckCursor(t *testing.T) {
	b := Bounds{Lower: 3, Latest: 7}
	for after := range int64(10) {
		err := CheckCursor(b, after)
		switch {
		case after < 3:
			assert.ErrorIs(t, err, refusal.ErrStaleCursor, "after %d", after)
		case after > 7:
			assert.ErrorIs(t, err, refusal.ErrCursorAhead, "after %d", after)
		default:
			assert.NoError(t, err, "after %d", after)
			continue
		}
		ce, ok := errors.AsType[*CursorError](err)
		require.True(t, ok)
		assert.Equal(t, after, ce.Cursor)
		assert.Equal(t, b, ce.Bounds)
		assert.Equal(t, refusal.CodeOf(ce.Err), refusal.CodeOf(err), "CodeOf sees through the *CursorError")
		assert.NotEmpty(t, err.Error())
	}
	assert.NoError(t, CheckCursor(Bounds{}, 0), "an empty window serves cursor 0")
	assert.ErrorIs(t, CheckCursor(Bounds{}, 1), refusal.ErrCursorAhead)
	assert.NoError(t, CheckCursor(Bounds{Lower: 5, Latest: 5, Ended: true}, 5))
}

func TestCheckAppend(t *testing.T) {
	key := Key{"c", "t"}
	result := delta(key, 4, "")
	result.Event = &chatprotocol.ToolResultEvent{CallID: "x", Status: chatprotocol.ToolResultOK}
	for _, c := range []struct {
		name string
		b    Bounds
		env  *chatprotocol.ChatEventEnvelope
		want error
		path string
	}{
		{"next", Bounds{Latest: 3}, delta(key, 4, ""), nil, ""},
		{"first", Bounds{}, delta(key, 1, ""), nil, ""},
		{"first after trimming", Bounds{Lower: 3, Latest: 3}, delta(key, 4, ""), nil, ""},
		{"gap", Bounds{Latest: 3}, delta(key, 5, ""), refusal.ErrSequenceGap, "/seq"},
		{"reordered", Bounds{Latest: 3}, delta(key, 2, ""), refusal.ErrSequenceReordered, "/seq"},
		{"redelivered", Bounds{Latest: 3}, delta(key, 3, ""), refusal.ErrSequenceReordered, "/seq"},
		{"other conversation", Bounds{Latest: 3}, delta(Key{"d", "t"}, 4, ""), refusal.ErrForeignFrame, "/conversationId"},
		{"other turn", Bounds{Latest: 3}, delta(Key{"c", "u"}, 4, ""), refusal.ErrForeignFrame, "/turnId"},
		{"after the end", Bounds{Latest: 3, Ended: true}, delta(key, 4, ""), refusal.ErrTurnTerminated, "/event"},
		{"late tool_result", Bounds{Latest: 3, Ended: true}, result, nil, ""},
	} {
		err := CheckAppend(key, c.b, c.env)
		if c.want == nil {
			assert.NoError(t, err, c.name)
			continue
		}
		assert.ErrorIs(t, err, c.want, c.name)
		ae, ok := errors.AsType[*AppendError](err)
		require.True(t, ok, c.name)
		assert.Equal(t, c.b, ae.Bounds, c.name)
		assert.Equal(t, c.env.Seq, ae.Seq, c.name)
		re, ok := errors.AsType[*refusal.Error](err)
		require.True(t, ok, c.name)
		assert.Equal(t, c.path, re.Path, c.name)
	}
}

func TestEncodeFrame(t *testing.T) {
	key := Key{"c", "t"}
	env := delta(key, 2, "héllo\n")
	f, err := EncodeFrame(env, 0)
	require.NoError(t, err)
	want, err := env.AppendJSON(nil)
	require.NoError(t, err)
	assert.Equal(t, Frame{Seq: 2, Type: "delta", Data: want}, f)

	_, err = EncodeFrame(env, len(want)-1)
	assert.ErrorIs(t, err, refusal.ErrFrameTooLarge)
	_, err = EncodeFrame(env, len(want))
	assert.NoError(t, err)
	_, err = EncodeFrame(nil, 0)
	assert.ErrorIs(t, err, refusal.ErrInvalidEnvelope)
	bad := delta(key, 2, "")
	bad.Event = &chatprotocol.ToolCallEvent{Name: "x", Input: json.RawMessage(`{`)}
	_, err = EncodeFrame(bad, 0)
	assert.Equal(t, refusal.CodeOf(bad.Validate()), refusal.CodeOf(err), "Validate's refusal")
}

func TestEndsTurn(t *testing.T) {
	key := Key{"c", "t"}
	for status, ends := range map[chatprotocol.LifecycleStatus]bool{
		chatprotocol.LifecycleStarted: false, chatprotocol.LifecycleInterrupted: false, chatprotocol.LifecycleNeedsReconciliation: false,
		chatprotocol.LifecycleCompleted: true, chatprotocol.LifecycleFailed: true, chatprotocol.LifecycleCancelled: true,
	} {
		assert.Equal(t, ends, EndsTurn(lifecycle(key, 1, status)), "%s", status)
	}
	assert.False(t, EndsTurn(delta(key, 1, "completed")))
}

func TestBoundsString(t *testing.T) {
	assert.Equal(t, "(3, 7]", Bounds{Lower: 3, Latest: 7}.String())
	assert.Equal(t, "(7, 7] ended", Bounds{Lower: 7, Latest: 7, Ended: true}.String())
}
