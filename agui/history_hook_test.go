package agui_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/turn"
)

// TestHistoryHook: with HandlerOptions.History a run's client gets the
// thread's MESSAGES_SNAPSHOT right after RUN_STARTED, as the run's turn
// started: the earlier turns and the run's user message; a History that
// fails sends none and the run goes on.
func TestHistoryHook(t *testing.T) {
	w := replay.NewMemory(nil)
	g := &conversation.Gate{Store: conversation.NewMemoryStore(), Access: conversation.OwnerOnly(func(r *http.Request) (conversation.Principal, error) {
		return conversation.Principal{ID: "alice"}, nil
	})}
	start := agui.StartRunOf(g, func(ctx context.Context, _ *http.Request, c conversation.Conversation, tu conversation.Turn, _ *agui.RunInput) error {
		return answer(ctx, w, g, c, tu)
	})
	history := agui.HistoryOf(g)
	failing := false
	h, err := agui.NewHandler(w, &agui.HandlerOptions{StartRun: start,
		History: func(ctx context.Context, r *http.Request, key replay.Key) (json.RawMessage, error) {
			if failing {
				return nil, errors.New("the store is down")
			}
			return history(ctx, r, key)
		}})
	require.NoError(t, err)
	run := func(runID, question string) []map[string]any {
		body := `{"threadId":"thread-1","runId":"` + runID + `","messages":[{"id":"x","role":"user","content":"` + question + `"}]}`
		r := httptest.NewRequest(http.MethodPost, "/agent", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var evs []map[string]any
		for _, line := range strings.Split(rec.Body.String(), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				var ev map[string]any
				require.NoError(t, json.Unmarshal([]byte(d), &ev), d)
				evs = append(evs, ev)
			}
		}
		return evs
	}
	first := run("run-1", "one")
	require.GreaterOrEqual(t, len(first), 3)
	assert.Equal(t, "RUN_STARTED", first[0]["type"])
	assert.Equal(t, "MESSAGES_SNAPSHOT", first[1]["type"])
	msgs := first[1]["messages"].([]any)
	require.Len(t, msgs, 1)
	assert.Equal(t, "one", msgs[0].(map[string]any)["content"])
	assert.Equal(t, "RUN_FINISHED", first[len(first)-1]["type"])

	second := run("run-2", "two")
	msgs = second[1]["messages"].([]any)
	var contents []any
	for _, m := range msgs {
		contents = append(contents, m.(map[string]any)["content"])
	}
	assert.Equal(t, []any{"one", "Answer to one", "two"}, contents, "the first turn whole, then the run's user message")

	failing = true
	third := run("run-3", "three")
	assert.Equal(t, "RUN_STARTED", third[0]["type"])
	assert.NotEqual(t, "MESSAGES_SNAPSHOT", third[1]["type"], "no snapshot")
	assert.Equal(t, "RUN_FINISHED", third[len(third)-1]["type"])
}

// answer plays a run's turn on w: "Answer to" the user's text, completed,
// then stored in g's store.
func answer(ctx context.Context, w replay.Window, g *conversation.Gate, c conversation.Conversation, tu conversation.Turn) error {
	key := replay.Key{ConversationID: c.ID, TurnID: tu.ID}
	p, err := turn.Start(ctx, w, key, nil)
	if err != nil {
		return err
	}
	if err := errors.Join(p.Delta(ctx, "Answer to "+tu.UserText), p.Complete(ctx)); err != nil {
		return err
	}
	return conversation.EndFromWindow(ctx, g.Store, w, key)
}
