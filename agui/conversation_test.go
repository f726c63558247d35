package agui_test

import (
	"context"
	"encoding/json"
	"errors"
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
	start := agui.StartRunOf(g, func(context.Context, *http.Request, conversation.Conversation, conversation.Turn, *agui.RunInput) error {
		return nil
	})
	as := func(user string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/agent", nil)
		r.Header.Set("X-User", user)
		return r
	}
	ctx := t.Context()
	for i, content := range []string{`"plain text"`, `[{"type":"text","text":"a "},{"type":"binary","mimeType":"x"},{"type":"text","text":"b"}]`} {
		in := &agui.RunInput{ThreadID: "thread-1", RunID: "run", Messages: json.RawMessage(`[
			{"id":"u0","role":"user","content":"earlier"},{"id":"a0","role":"assistant","content":"ok"},
			{"id":"u1","role":"user","content":` + content + `}]`)}
		key, err := start(ctx, as("alice"), in)
		require.NoError(t, err)
		_, tu, err := s.Turn(ctx, "thread-1", key.TurnID)
		require.NoError(t, err)
		require.Equal(t, []string{"plain text", "a b"}[i], tu.UserText)
		_, err = start(ctx, as("bob"), in)
		require.ErrorIs(t, err, refusal.ErrTurnNotFound)
		require.NoError(t, s.EndTurn(ctx, "thread-1", key.TurnID, []byte(`{}`)))
	}
}
