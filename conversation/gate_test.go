package conversation_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/conversation"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/stream"
	"github.com/Papercusp/chat-protocol-go/turn"
)

var (
	alice = conversation.Principal{ID: "alice", Tenant: "acme"}
	bob   = conversation.Principal{ID: "bob", Tenant: "acme"}
)

// session is the hosts' session lookup of these tests: the X-User header.
func session(r *http.Request) (conversation.Principal, error) {
	switch r.Header.Get("X-User") {
	case "alice":
		return alice, nil
	case "bob":
		return bob, nil
	}
	return conversation.Principal{}, errors.New("no session")
}

// gated is a memory store with one conversation of alice's and its
// running turn, and the Gate over it with recovery.
func gated(t *testing.T) (*conversation.Gate, conversation.Conversation, conversation.Turn) {
	t.Helper()
	s := conversation.NewMemoryStore()
	c, err := s.Create(t.Context(), "c1", alice)
	require.NoError(t, err)
	tu, _, err := s.StartTurn(t.Context(), c.ID, conversation.TurnStart{UserText: "hello"})
	require.NoError(t, err)
	g := &conversation.Gate{Store: s, Access: conversation.OwnerOnly(session)}
	g.Recovery = recovery.New(recovery.Host{Store: recovery.NewMemoryStore(nil), Authorizer: g}, nil)
	return g, c, tu
}

// answer is one response as a client sees it, the Date header aside.
type answer struct {
	status int
	header http.Header
	body   string
}

func do(t *testing.T, h http.Handler, method, path, user string) answer {
	t.Helper()
	r := httptest.NewRequest(method, path, nil)
	if user != "" {
		r.Header.Set("X-User", user)
	}
	r.Header.Set("X-Requested-With", "test")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	res := w.Result()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	res.Header.Del("Date")
	return answer{status: res.StatusCode, header: res.Header, body: string(body)}
}

// The stream: a caller who does not own the conversation, an unknown
// turn, an unknown conversation and no session get the same bytes.
func TestGateStreamDenialsLookAlike(t *testing.T) {
	g, c, tu := gated(t)
	h, err := stream.NewHandler(replay.NewMemory(nil), &stream.HandlerOptions{Authorize: g.AuthorizeStream})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/conversations/{conversation}/turns/{turn}/events", h)
	path := func(conv, turn string) string { return "/conversations/" + conv + "/turns/" + turn + "/events" }

	forbidden := do(t, mux, http.MethodGet, path(c.ID, tu.ID), "bob")
	require.Equal(t, http.StatusNotFound, forbidden.status)
	require.JSONEq(t, `{"code":"turn-not-found","message":"no such turn"}`, forbidden.body)
	for _, other := range []answer{
		do(t, mux, http.MethodGet, path(c.ID, "no-such-turn"), "alice"),
		do(t, mux, http.MethodGet, path("no-such-conversation", tu.ID), "alice"),
		do(t, mux, http.MethodGet, path(c.ID, tu.ID), ""),
	} {
		require.Equal(t, forbidden, other)
	}
	r := httptest.NewRequest(http.MethodGet, path(c.ID, tu.ID), nil)
	r.Header.Set("X-User", "alice")
	r.SetPathValue("conversation", c.ID)
	r.SetPathValue("turn", tu.ID)
	require.NoError(t, g.AuthorizeStream(r, replay.Key{ConversationID: c.ID, TurnID: tu.ID}))
}

// The cancel endpoint through recovery's Authorizer: the owner cancels;
// another caller and an unknown turn get the same 404.
func TestGateCancelThroughRecovery(t *testing.T) {
	g, c, tu := gated(t)
	ref := recovery.TurnRef{Conversation: c.ID, Turn: tu.ID}
	_, err := g.Recovery.Start(t.Context(), alice.String(), ref, nil)
	require.NoError(t, err)
	_, err = g.Recovery.Start(t.Context(), bob.String(), recovery.TurnRef{Conversation: c.ID, Turn: "t2"}, nil)
	require.ErrorIs(t, err, refusal.ErrUnauthorized, "bob runs nothing in alice's conversation")
	h, err := turn.NewCancelHandler(g.Recovery, &turn.CancelHandlerOptions{Caller: g.CallerString})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/conversations/{conversation}/turns/{turn}/cancel", h)
	path := "/conversations/" + c.ID + "/turns/" + tu.ID + "/cancel"

	forbidden := do(t, mux, http.MethodPost, path, "bob")
	require.Equal(t, http.StatusNotFound, forbidden.status)
	require.JSONEq(t, `{"code":"turn-not-found","message":"no such turn"}`, forbidden.body)
	require.Equal(t, forbidden, do(t, mux, http.MethodPost, "/conversations/"+c.ID+"/turns/no-such-turn/cancel", "alice"))
	require.Equal(t, forbidden, do(t, mux, http.MethodPost, path, ""))
	require.Equal(t, http.StatusAccepted, do(t, mux, http.MethodPost, path, "alice").status)
	rec, err := g.Recovery.Load(t.Context(), alice.String(), ref)
	require.NoError(t, err)
	require.Equal(t, recovery.TurnCancelled, rec.Status)
}

// The bridges' ActiveTurn and Cancel: the owner finds the running turn;
// another caller and an unknown chat are denied alike; an ended turn is
// no running turn.
func TestGateActiveTurnAndCancel(t *testing.T) {
	g, c, tu := gated(t)
	ctx := t.Context()
	req := func(user string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/api/chat/"+c.ID+"/stream", nil)
		r.Header.Set("X-User", user)
		return r
	}
	key, ok, err := g.ActiveTurn(ctx, req("alice"), c.ID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, replay.Key{ConversationID: c.ID, TurnID: tu.ID}, key)
	_, _, err = g.ActiveTurn(ctx, req("bob"), c.ID)
	require.ErrorIs(t, err, refusal.ErrTurnNotFound)
	_, _, err2 := g.ActiveTurn(ctx, req("alice"), "no-such-chat")
	require.ErrorIs(t, err2, refusal.ErrTurnNotFound)

	_, err = g.Recovery.Start(ctx, alice.String(), recovery.TurnRef{Conversation: c.ID, Turn: tu.ID}, nil)
	require.NoError(t, err)
	require.ErrorIs(t, g.Cancel(ctx, req("bob"), key), refusal.ErrUnauthorized)
	require.NoError(t, g.Cancel(ctx, req("alice"), key))

	require.NoError(t, g.Store.EndTurn(ctx, c.ID, tu.ID, []byte(`{"turnId":"x","status":"cancelled"}`)))
	_, ok, err = g.ActiveTurn(ctx, req("alice"), c.ID)
	require.NoError(t, err)
	require.False(t, ok)

	caller, err := g.CardCaller(req("alice"))
	require.NoError(t, err)
	require.Equal(t, "alice", caller.Principal)
	require.Equal(t, "acme", caller.Tenant)
}

// A principal goes through recovery's caller string and back; anything
// else is refused.
func TestPrincipalString(t *testing.T) {
	for _, p := range []conversation.Principal{alice, {ID: "a b+c%", Tenant: ""}, {ID: "ü/ :", Tenant: "t e"}} {
		got, err := conversation.ParsePrincipal(p.String())
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	for _, s := range []string{"", "alice", "acme  alice", "acme alice bob", "%zz alice", "acme "} {
		_, err := conversation.ParsePrincipal(s)
		require.ErrorIs(t, err, refusal.ErrUnauthorized, "%q", s)
	}
}

func TestGateCardAuthority(t *testing.T) {
	g, c, _ := gated(t)
	ctx := t.Context()
	a, err := g.CardAuthority(ctx, conversation.CardAnswerer(alice), c.ID)
	require.NoError(t, err)
	assert.Equal(t, interactions.Authority{Active: true, Scope: interactions.Scope{Conversation: c.ID, Caller: conversation.CardAnswerer(alice)}}, a)
	for _, who := range []interactions.Caller{conversation.CardAnswerer(bob), {Principal: "alice", Tenant: "other"}} {
		a, err = g.CardAuthority(ctx, who, c.ID)
		require.NoError(t, err)
		assert.False(t, a.Active, "%+v", who)
	}
	a, err = g.CardAuthority(ctx, conversation.CardAnswerer(alice), "no-such")
	require.NoError(t, err)
	assert.False(t, a.Active)
	assert.Equal(t, interactions.Authority{Active: true, Scope: interactions.Scope{Conversation: c.ID, Caller: conversation.CardAnswerer(alice)}},
		g.CardAuthorityFunc()(conversation.CardAnswerer(alice), c.ID))
}
