package uistream_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// A chat's first POST creates the conversation for its caller and starts a
// turn with the last user message's text, the message's id its request
// key; the same message again is its turn, run once; another message is
// turn-running, another caller is denied, a run that fails ends the turn;
// a regenerate and a continuation of an assistant message start turns of
// their own.
func TestStartTurnOf(t *testing.T) {
	s := conversation.NewMemoryStore()
	g := &conversation.Gate{Store: s, Access: conversation.OwnerOnly(func(r *http.Request) (conversation.Principal, error) {
		if u := r.Header.Get("X-User"); u != "" {
			return conversation.Principal{ID: u}, nil
		}
		return conversation.Principal{}, errors.New("no session")
	})}
	fail, runs := false, 0
	start := uistream.StartTurnOf(g, func(context.Context, *http.Request, conversation.Conversation, conversation.Turn, *uistream.Request) error {
		if fail {
			return errors.New("no worker")
		}
		runs++
		return nil
	})
	as := func(user string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/api/chat", nil)
		r.Header.Set("X-User", user)
		return r
	}
	req := &uistream.Request{ChatID: "chat-1", Trigger: "submit-message", Messages: json.RawMessage(`[
		{"id":"m1","role":"user","parts":[{"type":"text","text":"first"}]},
		{"id":"m2","role":"assistant","parts":[{"type":"text","text":"answer"}]},
		{"id":"m3","role":"user","parts":[{"type":"text","text":"second "},{"type":"file","url":"x"},{"type":"text","text":"question"}]}]`)}
	ctx := t.Context()

	key, err := start(ctx, as("alice"), req)
	require.NoError(t, err)
	require.Equal(t, "chat-1", key.ConversationID)
	c, tu, err := s.Turn(ctx, "chat-1", key.TurnID)
	require.NoError(t, err)
	require.Equal(t, conversation.Principal{ID: "alice"}, c.Owner)
	require.Equal(t, "second question", tu.UserText)
	require.Equal(t, "m3", tu.Key)

	again, err := start(ctx, as("alice"), req)
	require.NoError(t, err)
	require.Equal(t, key, again, "the same user message again is its turn")
	require.Equal(t, 1, runs, "and runs nothing")
	other := *req
	other.Messages = json.RawMessage(`[{"id":"m4","role":"user","parts":[{"type":"text","text":"another"}]}]`)
	_, err = start(ctx, as("alice"), &other)
	require.ErrorIs(t, err, refusal.ErrTurnRunning)
	_, err = start(ctx, as("bob"), req)
	require.ErrorIs(t, err, refusal.ErrTurnNotFound)

	require.NoError(t, s.EndTurn(ctx, "chat-1", key.TurnID, []byte(`{}`)))
	again, err = start(ctx, as("alice"), req)
	require.NoError(t, err)
	require.Equal(t, key, again, "the same user message once its turn ended is that turn")
	regen := *req
	regen.Trigger = "regenerate-message"
	regenerated, err := start(ctx, as("alice"), &regen)
	require.NoError(t, err)
	require.NotEqual(t, key.TurnID, regenerated.TurnID, "a regenerate is a new turn")
	_, tu, err = s.Turn(ctx, "chat-1", regenerated.TurnID)
	require.NoError(t, err)
	require.Empty(t, tu.Key)
	require.NoError(t, s.EndTurn(ctx, "chat-1", regenerated.TurnID, []byte(`{}`)))
	cont := *req
	cont.Continues = "m2"
	continued, err := start(ctx, as("alice"), &cont)
	require.NoError(t, err)
	require.NotEqual(t, key.TurnID, continued.TurnID, "a continuation is a new turn")
	require.NoError(t, s.EndTurn(ctx, "chat-1", continued.TurnID, []byte(`{}`)))
	require.Equal(t, 3, runs)

	fail = true
	_, err = start(ctx, as("alice"), &other)
	require.ErrorIs(t, err, refusal.ErrStoreUnavailable)
	_, running, err := s.Running(ctx, "chat-1")
	require.NoError(t, err)
	require.False(t, running, "the turn that did not start has ended")
}
