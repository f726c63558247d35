package agui_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// A thread's first run creates the conversation for its caller and starts
// a turn with the last user message's content; another caller is denied.
func TestStartRunOf(t *testing.T) {
	s := conversation.NewMemoryStore()
	g := &conversation.Gate{Store: s, Access: conversation.OwnerOnly(func(r *http.Request) (conversation.Principal, error) {
		if u := r.Header.Get("X-User"); u != "" {
			return conversation.Principal{ID: u}, nil
		}
		return conversation.Principal{}, errors.New("no session")
	})}
	runs := 0
	start := agui.StartRunOf(g, func(context.Context, *http.Request, conversation.Conversation, conversation.Turn, *agui.RunInput) error {
		runs++
		return nil
	})
	as := func(user string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/agent", nil)
		r.Header.Set("X-User", user)
		return r
	}
	ctx := t.Context()
	for i, content := range []string{`"plain text"`, `[{"type":"text","text":"a "},{"type":"binary","mimeType":"x"},{"type":"text","text":"b"}]`} {
		in := &agui.RunInput{ThreadID: "thread-1", RunID: fmt.Sprint("run-", i), Messages: json.RawMessage(`[
			{"id":"u0","role":"user","content":"earlier"},{"id":"a0","role":"assistant","content":"ok"},
			{"id":"u1","role":"user","content":` + content + `}]`)}
		key, err := start(ctx, as("alice"), in)
		require.NoError(t, err)
		_, tu, err := s.Turn(ctx, "thread-1", key.TurnID)
		require.NoError(t, err)
		require.Equal(t, []string{"plain text", "a b"}[i], tu.UserText)
		require.Equal(t, in.RunID, tu.Key, "the run id is the start's request key")
		_, err = start(ctx, as("bob"), in)
		require.ErrorIs(t, err, refusal.ErrTurnNotFound)
		require.NoError(t, s.EndTurn(ctx, "thread-1", key.TurnID, []byte(`{}`)))
	}
	require.Equal(t, 2, runs)
}

// A run id the thread has seen is its run's turn again, running or ended,
// and its producer is not launched again; another run id while the turn
// runs is turn-running; a caller the rule lets start but not read gets
// nothing of a run seen before.
func TestStartRunOfSeenRun(t *testing.T) {
	s := conversation.NewMemoryStore()
	readable := true
	g := &conversation.Gate{Store: s, Access: access{
		caller: func(r *http.Request) (conversation.Principal, error) {
			return conversation.Principal{ID: r.Header.Get("X-User")}, nil
		},
		allow: func(_ conversation.Principal, a conversation.Action) bool {
			return a != conversation.ActionRead || readable
		}}}
	runs := 0
	start := agui.StartRunOf(g, func(context.Context, *http.Request, conversation.Conversation, conversation.Turn, *agui.RunInput) error {
		runs++
		return nil
	})
	r := httptest.NewRequest(http.MethodPost, "/agent", nil)
	r.Header.Set("X-User", "alice")
	ctx := t.Context()
	in := &agui.RunInput{ThreadID: "thread-1", RunID: "run-1", Messages: json.RawMessage(`[{"id":"u1","role":"user","content":"hi"}]`)}
	key, err := start(ctx, r, in)
	require.NoError(t, err)
	again, err := start(ctx, r, in)
	require.NoError(t, err)
	require.Equal(t, key, again)
	other := *in
	other.RunID = "run-2"
	_, err = start(ctx, r, &other)
	require.ErrorIs(t, err, refusal.ErrTurnRunning)
	readable = false
	_, err = start(ctx, r, in)
	require.ErrorIs(t, err, refusal.ErrTurnNotFound, "a seen run is read again: the rule's read decides")
	readable = true
	require.NoError(t, s.EndTurn(ctx, "thread-1", key.TurnID, []byte(`{}`)))
	again, err = start(ctx, r, in)
	require.NoError(t, err)
	require.Equal(t, key, again, "the run's turn once it ended")
	require.Equal(t, 1, runs, "the run's producer is launched once")
}

// access is a conversation.Access of functions.
type access struct {
	caller func(r *http.Request) (conversation.Principal, error)
	allow  func(p conversation.Principal, a conversation.Action) bool
}

func (a access) Caller(r *http.Request) (conversation.Principal, error) { return a.caller(r) }

func (a access) Allow(_ context.Context, p conversation.Principal, _ conversation.Conversation, act conversation.Action) error {
	if !a.allow(p, act) {
		return refusal.New(refusal.CodeUnauthorized, "", "not allowed")
	}
	return nil
}
