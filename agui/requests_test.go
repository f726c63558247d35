package agui_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/agui"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/slowbody"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/serve"
)

// TestARunIsCheckedBeforeItsBodyIsRead: with a Caller, a POST without a
// session is 401 unauthenticated before a byte of its body is read, and a
// cross-site one 415 likewise; a body that stalls is cut by BodyTimeout,
// 400 invalid-input (docs/contract.md sections 12.6 and 18.3). None
// starts a run.
func TestARunIsCheckedBeforeItsBodyIsRead(t *testing.T) {
	res, err := interactions.New(interactionstest.NewDB().Open(nil), jsonschema.NewRegistry(), &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	started := 0
	h, err := agui.NewHandler(replay.NewMemory(nil), &agui.HandlerOptions{Resolver: res, BodyLimits: serve.BodyLimits{BodyTimeout: 100 * time.Millisecond},
		StartRun: func(context.Context, *http.Request, *agui.RunInput) (replay.Key, error) {
			started++
			return replay.Key{}, refusal.ErrTurnNotFound
		},
		Caller: func(r *http.Request) (interactions.Caller, error) {
			if u := r.Header.Get("X-User"); u != "" {
				return interactions.Caller{Principal: u}, nil
			}
			return interactions.Caller{}, errors.New("no session")
		}})
	require.NoError(t, err)
	for _, c := range []struct {
		user, ctype string
		status      int
		code        refusal.Code
	}{
		{"", "application/json", http.StatusUnauthorized, refusal.CodeUnauthenticated},
		{"alice", "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType, refusal.CodeUnsupportedMediaType},
	} {
		body := slowbody.NewNever(t)
		req := httptest.NewRequest(http.MethodPost, "/", body)
		req.Header.Set("Content-Type", c.ctype)
		if c.user != "" {
			req.Header.Set("X-User", c.user)
		}
		rec := slowbody.Answer(t, h, req)
		var got struct{ Code refusal.Code }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
		assert.Equal(t, c.status, rec.Code, "%+v", c)
		assert.Equal(t, c.code, got.Code, "%+v", c)
		assert.False(t, body.WasRead(), "%+v", c)
	}

	srv := httptest.NewServer(h)
	defer srv.Close()
	resp := slowbody.Stall(t, srv.Listener.Addr().String(), "/", "X-User: alice\r\nContent-Type: application/json\r\n", `{"threadId":"thread-1","runId":"r","messages":[]`)
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	var got struct{ Code refusal.Code }
	require.NoError(t, json.Unmarshal(b, &got), "%s", b)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, refusal.CodeInvalidInput, got.Code)
	assert.Zero(t, started)
}
