package agui_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// TestRunRepostedAfterTheWindowForgotIt: a run id re-posted once its turn
// ended and the window forgot it (its tombstone too), or once its run
// failed to start (ended in the store, never in the window), is refused
// 410 stale-cursor with the bounds, at once, rather than streamed from a
// first frame that never comes; a run the window still holds is replayed.
func TestRunRepostedAfterTheWindowForgotIt(t *testing.T) {
	now := time.Now()
	w := replay.NewMemory(&replay.MemoryOptions{MaxTombstones: 1, EndedTTL: time.Second, Now: func() time.Time { return now }})
	store := conversation.Settling{Store: conversation.NewMemoryStore(), Window: w}
	g := &conversation.Gate{Store: store, Access: conversation.OwnerOnly(func(r *http.Request) (conversation.Principal, error) {
		return conversation.Principal{ID: "alice"}, nil
	})}
	start := agui.StartRunOf(g, func(ctx context.Context, _ *http.Request, c conversation.Conversation, tu conversation.Turn, in *agui.RunInput) error {
		if in.RunID == "fails" {
			return errors.New("the model is down")
		}
		return answer(ctx, w, g, c, tu)
	})
	h, err := agui.NewHandler(w, &agui.HandlerOptions{StartRun: start})
	require.NoError(t, err)
	post := func(thread, run string) (int, string) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		body := `{"threadId":"` + thread + `","runId":"` + run + `","messages":[{"id":"x","role":"user","content":"q"}]}`
		r := httptest.NewRequest(http.MethodPost, "/agent", strings.NewReader(body)).WithContext(ctx)
		r.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		require.NoError(t, ctx.Err(), "the request was answered before its deadline: %s", rec.Body.String())
		return rec.Code, rec.Body.String()
	}
	refused := func(code int, body string) {
		t.Helper()
		require.Equal(t, http.StatusGone, code, body)
		var b struct {
			Code          refusal.Code
			Lower, Latest *int64
		}
		require.NoError(t, json.Unmarshal([]byte(body), &b))
		require.Equal(t, refusal.CodeStaleCursor, b.Code)
		require.NotNil(t, b.Lower)
		require.NotNil(t, b.Latest)
		require.Equal(t, int64(0), *b.Latest)
	}

	code, first := post("t1", "r1")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, first, `"RUN_FINISHED"`)
	code, again := post("t1", "r1")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, first, again, "a run the window holds is replayed whole")

	now = now.Add(time.Hour)
	code, _ = post("t2", "r2") // evicts t1's turn, its tombstone kept
	require.Equal(t, http.StatusOK, code)
	now = now.Add(time.Hour)
	code, _ = post("t3", "r3") // evicts t2's turn, t1's tombstone forgotten
	require.Equal(t, http.StatusOK, code)
	refused(post("t1", "r1"))

	code, body := post("t4", "fails")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	refused(post("t4", "fails"))
}
