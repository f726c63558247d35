package conversation_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// TestEndFromWindowAndSettling: the state a turn's frames reduce to is
// stored, once and again with the same bytes; a start right after a
// turn's stream ended, before its host stored it, settles it first.
func TestEndFromWindowAndSettling(t *testing.T) {
	ctx := t.Context()
	w := replay.NewMemory(nil)
	s := conversation.Settling{Store: conversation.NewMemoryStore(), Window: w}
	c, err := s.Create(ctx, "c1", alice)
	require.NoError(t, err)
	t1, _, err := s.StartTurn(ctx, c.ID, conversation.TurnStart{UserText: "hello", Key: "run-1"})
	require.NoError(t, err)
	key := replay.Key{ConversationID: c.ID, TurnID: t1.ID}

	err = conversation.EndFromWindow(ctx, s, w, key)
	assert.Equal(t, refusal.CodeStaleCursor, refusal.CodeOf(err), "no frame yet")
	p, err := turn.Start(ctx, w, key, nil)
	require.NoError(t, err)
	require.NoError(t, p.Delta(ctx, "Hi "))
	_, _, err = s.StartTurn(ctx, c.ID, conversation.TurnStart{UserText: "too soon"})
	require.ErrorIs(t, err, refusal.ErrTurnRunning, "the turn runs in the window too")
	again, started, err := s.StartTurn(ctx, c.ID, conversation.TurnStart{UserText: "hello", Key: "run-1"})
	require.NoError(t, err)
	assert.False(t, started, "the run's key again is its turn")
	assert.Equal(t, t1.ID, again.ID)
	require.NoError(t, p.Delta(ctx, "there."))
	require.NoError(t, p.Complete(ctx))

	early, err := s.History(ctx, c.ID)
	require.NoError(t, err)
	assert.True(t, early.Turns[0].Ended(), "read as soon as the stream ended: the turn is stored first")
	assert.Empty(t, early.Conversation.Running)
	t2, _, err := s.StartTurn(ctx, c.ID, conversation.TurnStart{UserText: "next"})
	require.NoError(t, err)
	require.NoError(t, conversation.EndFromWindow(ctx, s, w, key), "the host's own store of it, the same bytes")
	h, err := s.History(ctx, c.ID)
	require.NoError(t, err)
	require.Len(t, h.Turns, 2)
	red, err := h.Turns[0].Reduce()
	require.NoError(t, err)
	assert.Equal(t, conversation.Reduced{TurnID: t1.ID, Status: "completed", Text: "Hi there.", ToolCalls: []conversation.ReducedCall{}}, red)
	assert.Equal(t, t2.ID, h.Conversation.Running)

	up := h.Upto(t1.ID)
	require.Len(t, up.Turns, 1)
	assert.Equal(t, conversation.Turn{ID: t1.ID, Position: 1, UserText: "hello"}, up.Turns[0], "as it started: no state")
	assert.Len(t, h.Upto("no-such").Turns, 2)
	assert.True(t, h.Turns[0].Ended(), "Upto leaves h as it is")
}

func TestGateReadHistory(t *testing.T) {
	g, c, tu := gated(t)
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-User", "alice")
	h, err := g.ReadHistory(t.Context(), r, c.ID)
	require.NoError(t, err)
	assert.Equal(t, c.ID, h.Conversation.ID)
	require.Len(t, h.Turns, 1)
	assert.Equal(t, tu.ID, h.Turns[0].ID)
	_, err = g.ReadHistory(t.Context(), r, "no-such")
	assert.ErrorIs(t, err, refusal.ErrTurnNotFound)
	r.Header.Set("X-User", "bob")
	_, err = g.ReadHistory(t.Context(), r, c.ID)
	assert.ErrorIs(t, err, refusal.ErrTurnNotFound, "another caller: as an unknown conversation")
	r.Header.Del("X-User")
	_, err = g.ReadHistory(t.Context(), r, c.ID)
	assert.ErrorIs(t, err, refusal.ErrTurnNotFound, "no session")
}

// noRead lets every caller do everything but read.
type noRead struct{}

func (noRead) Caller(*http.Request) (conversation.Principal, error) { return alice, nil }

func (noRead) Allow(_ context.Context, _ conversation.Principal, _ conversation.Conversation, a conversation.Action) error {
	if a == conversation.ActionRead {
		return refusal.New(refusal.CodeUnauthorized, "", "no read")
	}
	return nil
}

// TestSettlingForgottenTurn: a start whose key names an ended turn the
// window knows nothing of is stale-cursor, with the bounds and the turn,
// through the Gate only for a caller the rule lets read it (turn-not-found
// otherwise); a key of a turn the window holds is that turn again.
func TestSettlingForgottenTurn(t *testing.T) {
	ctx := t.Context()
	w := replay.NewMemory(nil)
	s := conversation.Settling{Store: conversation.NewMemoryStore(), Window: w}
	_, err := s.Create(ctx, "c1", alice)
	require.NoError(t, err)
	tu, started, err := s.StartTurn(ctx, "c1", conversation.TurnStart{UserText: "hi", Key: "k-1"})
	require.NoError(t, err)
	require.True(t, started)
	require.NoError(t, s.EndTurn(ctx, "c1", tu.ID, []byte(`{}`)))

	seen, started, err := s.StartTurn(ctx, "c1", conversation.TurnStart{UserText: "hi", Key: "k-1"})
	require.ErrorIs(t, err, refusal.ErrStaleCursor)
	require.False(t, started)
	require.Equal(t, tu.ID, seen.ID)
	ce, ok := errors.AsType[*replay.CursorError](err)
	require.True(t, ok)
	require.Equal(t, replay.Bounds{}, ce.Bounds)

	g := &conversation.Gate{Store: s, Access: noRead{}}
	_, _, _, err = g.StartTurn(ctx, alice, "c1", conversation.TurnStart{UserText: "hi", Key: "k-1"}, false)
	require.ErrorIs(t, err, refusal.ErrTurnNotFound, "the rule's read decides before the window is told")

	key := replay.Key{ConversationID: "c1"}
	tu2, _, err := s.StartTurn(ctx, "c1", conversation.TurnStart{UserText: "again", Key: "k-2"})
	require.NoError(t, err)
	key.TurnID = tu2.ID
	p, err := turn.Start(ctx, w, key, nil)
	require.NoError(t, err)
	require.NoError(t, p.Complete(ctx))
	require.NoError(t, conversation.EndFromWindow(ctx, s, w, key))
	seen, started, err = s.StartTurn(ctx, "c1", conversation.TurnStart{UserText: "again", Key: "k-2"})
	require.NoError(t, err)
	require.False(t, started)
	require.Equal(t, tu2.ID, seen.ID)
}
