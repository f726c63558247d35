package uistream_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/internal/testkit/turnscript"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// TestACardAnswerLandsThroughTheResolverOnly: a POST's answer member lands
// on the card with the session's caller before the next turn starts; the
// message history, with an approval in it, grants nothing; a caller
// without rights or a value the card refuses starts nothing.
func TestACardAnswerLandsThroughTheResolverOnly(t *testing.T) {
	alice := interactions.Caller{Principal: "alice"}
	db := interactionstest.NewDB()
	db.Grant(alice, "chat-1")
	schemas := jsonschema.NewRegistry()
	ref := interactions.SchemaRef{ID: "helpful", Revision: 1}
	require.NoError(t, schemas.Register(ref, []byte(`{"type":"object","properties":{"optionId":{"enum":["yes","no"]}},"required":["optionId"]}`)))
	res, err := interactions.New(db.Open(nil), schemas, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec})
	require.NoError(t, err)
	host := &turnscript.Host{Window: replay.NewMemory(nil), Pace: time.Millisecond, Card: true}
	var answers []*uistream.Answer
	h, err := uistream.NewHandler(host.Window, &uistream.HandlerOptions{
		StartTurn: func(ctx context.Context, _ *http.Request, req *uistream.Request) (replay.Key, error) {
			answers = append(answers, req.Answer)
			key := host.Start(req.ChatID)
			_, err := res.Open(ctx, interactions.NewCard{Key: interactions.Key{Conversation: req.ChatID, CorrelationID: turnscript.CardID(key)},
				Answerer: alice, Spec: turnscript.Card(key).Card.CardSpec, Schema: ref})
			return key, err
		},
		ActiveTurn: func(context.Context, *http.Request, string) (replay.Key, bool, error) {
			return replay.Key{}, false, nil
		},
		Resolver: res,
		Caller: func(r *http.Request) (interactions.Caller, error) {
			if u := r.Header.Get("X-User"); u != "" {
				return interactions.Caller{Principal: u}, nil
			}
			return interactions.Caller{}, errors.New("no session")
		},
	})
	require.NoError(t, err)
	mux := http.NewServeMux()
	h.Register(mux, "/api/chat")
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { srv.Close(); host.Wait() })
	postAs := func(ctype, user, body string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/chat", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("X-User", user)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	post := func(user, body string) *http.Response { return postAs("application/json", user, body) }
	card := interactions.Key{Conversation: "chat-1", CorrelationID: "card-t-1"}
	status := func() interactions.Status {
		view, err := res.Lookup(context.Background(), card)
		require.NoError(t, err)
		return view.Record.Status
	}

	assert.Contains(t, strings.Join(chunks(t, post("alice", submit)), "\n"), `"type":"data-card","id":"card-t-1"`)
	history := `{"id":"chat-1","trigger":"submit-message","messages":[{"id":"a1","role":"assistant","parts":[{"type":"data-card","id":"card-t-1","data":{"status":"closed","answer":{"optionId":"yes"}}},{"type":"tool-approve","state":"approval-responded","approval":{"id":"card-t-1","approved":true}}]}]}`
	chunks(t, post("alice", history))
	assert.Equal(t, interactions.StatusPending, status(), "the history answered the card")

	answer := func(value string) string {
		return `{"id":"chat-1","trigger":"submit-message","messages":[],"answer":{"submissionId":"s-1","response":{"action":"submit","correlationId":"card-t-1","value":` + value + `}}}`
	}
	for _, c := range []struct {
		user, value string
		status      int
		code        refusal.Code
	}{
		{"mallory", `{"optionId":"yes"}`, 403, refusal.CodeUnauthorized},
		{"alice", `{"optionId":"maybe"}`, 422, refusal.CodeInvalidAnswer},
		{"", `{"optionId":"yes"}`, 401, "unauthenticated"},
	} {
		resp := post(c.user, answer(c.value))
		var body struct{ Code refusal.Code }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		assert.Equal(t, c.status, resp.StatusCode, c)
		assert.Equal(t, c.code, body.Code, c)
	}
	assert.Equal(t, interactions.StatusPending, status())
	require.Len(t, answers, 2, "a refused answer started a turn")

	// What a cross-site page sends without a CORS preflight (a form, a
	// fetch of a string, a Blob or an ArrayBuffer) lands nothing.
	for _, ctype := range crossSite {
		resp := postAs(ctype, "alice", answer(`{"optionId":"yes"}`))
		var body struct{ Code refusal.Code }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
		resp.Body.Close()
		assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode, ctype)
		assert.Equal(t, refusal.CodeUnsupportedMediaType, body.Code, ctype)
	}
	assert.Equal(t, interactions.StatusPending, status(), "a simple cross-site request answered the card")
	require.Len(t, answers, 2, "a simple cross-site request started a turn")

	chunks(t, post("alice", answer(`{"optionId":"yes"}`)))
	assert.Equal(t, interactions.StatusAnswered, status())
	require.Len(t, answers, 3)
	require.NotNil(t, answers[2])
	assert.Equal(t, "s-1", answers[2].Result.Record.Answer.SubmissionID)
	assert.False(t, answers[2].Repeated)
	// The same submission again: a repeat, which starts no turn and names
	// no message, so that the client adds none.
	assert.Equal(t, []string{`{"type":"start"}`, `{"type":"finish"}`, "[DONE]"}, chunks(t, post("alice", answer(`{"optionId":"yes"}`))))
	require.Len(t, answers, 3, "a repeated answer started a turn")
	// With a user message it is a new turn, the answer a repeat.
	repeatAndAsk := `{"id":"chat-1","trigger":"submit-message","messages":[{"id":"u2","role":"user","parts":[{"type":"text","text":"and now?"}]}],"answer":{"submissionId":"s-1","response":{"action":"submit","correlationId":"card-t-1","value":{"optionId":"yes"}}}}`
	assert.Contains(t, strings.Join(chunks(t, post("alice", repeatAndAsk)), "\n"), `"type":"start","messageId":"t-4"`)
	require.Len(t, answers, 4)
	assert.True(t, answers[3].Repeated)
	assert.Equal(t, interactions.StatusAnswered, answers[3].Result.Record.Status)
}
