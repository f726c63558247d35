package uistream_test

import (
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
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/slowbody"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/serve"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// TestAPostIsCheckedBeforeItsBodyIsRead: with a Caller, a POST without a
// session is 401 unauthenticated before a byte of its body is read, and a
// cross-site one 415 likewise; a body that stalls is cut by BodyTimeout,
// 400 invalid-input (docs/contract.md sections 12.6 and 18.3). None
// starts a turn.
func TestAPostIsCheckedBeforeItsBodyIsRead(t *testing.T) {
	res, err := interactions.New(interactionstest.NewDB().Open(nil), jsonschema.NewRegistry(), &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	f := newFixture(t, time.Millisecond, false, &uistream.HandlerOptions{Resolver: res, BodyLimits: serve.BodyLimits{BodyTimeout: 100 * time.Millisecond},
		Caller: func(r *http.Request) (interactions.Caller, error) {
			if u := r.Header.Get("X-User"); u != "" {
				return interactions.Caller{Principal: u}, nil
			}
			return interactions.Caller{}, errors.New("no session")
		}})
	for _, c := range []struct {
		user, ctype string
		status      int
		code        refusal.Code
	}{
		{"", "application/json", http.StatusUnauthorized, refusal.CodeUnauthenticated},
		{"alice", "text/plain", http.StatusUnsupportedMediaType, refusal.CodeUnsupportedMediaType},
	} {
		body := slowbody.NewNever(t)
		req := httptest.NewRequest(http.MethodPost, "/api/chat", body)
		req.Header.Set("Content-Type", c.ctype)
		if c.user != "" {
			req.Header.Set("X-User", c.user)
		}
		rec := slowbody.Answer(t, f.srv.Config.Handler, req)
		var got struct{ Code refusal.Code }
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got))
		assert.Equal(t, c.status, rec.Code, "%+v", c)
		assert.Equal(t, c.code, got.Code, "%+v", c)
		assert.False(t, body.WasRead(), "%+v", c)
	}

	resp := slowbody.Stall(t, f.srv.Listener.Addr().String(), "/api/chat", "X-User: alice\r\nContent-Type: application/json\r\n", submit[:len(submit)-1])
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	var got struct{ Code refusal.Code }
	require.NoError(t, json.Unmarshal(b, &got), "%s", b)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.Equal(t, refusal.CodeInvalidInput, got.Code)
	_, ok := f.host.Active("chat-1")
	assert.False(t, ok, "a refused request started a turn")
}
