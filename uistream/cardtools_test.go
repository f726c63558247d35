package uistream_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/uistream"
)

// approval is a POST continuing assistant message t-1 whose tool-card part
// toolCallId holds the approval id approved as ai's addToolApprovalResponse
// leaves it.
func approval(toolCallID, id string, approved bool) string {
	return `{"id":"chat-1","trigger":"submit-message","messageId":"t-1","messages":[` +
		`{"id":"u1","role":"user","parts":[{"type":"text","text":"Refund my order"}]},` +
		`{"id":"t-1","role":"assistant","parts":[{"type":"step-start"},{"type":"text","text":"I can refund $20.","state":"done"},` +
		`{"type":"tool-card","toolCallId":"` + toolCallID + `","state":"approval-responded","input":{"prompt":"Refund $20?"},` +
		`"approval":{"id":"` + id + `","approved":` + map[bool]string{true: "true", false: "false"}[approved] + `}}]}]}`
}

// codeOf reads a refusal's status and code.
func codeOf(t *testing.T, resp *http.Response) (int, refusal.Code) {
	t.Helper()
	defer resp.Body.Close()
	var body struct{ Code refusal.Code }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body.Code
}

// TestCardToolsLandApprovalsWithTheSessionsCallerOnly: under CardsTools a
// confirm card goes out as a tool approval request, and the approval in
// the client's messages lands through the Resolver with the session's
// caller: a forged approval id, another user's approval, an answer of the
// wrong shape and a tampered replay are refused by code and start no
// turn; the approval lands once, closes the card's part in the continued
// message, and its replay starts no turn.
func TestCardToolsLandApprovalsWithTheSessionsCallerOnly(t *testing.T) {
	h := newCardHost(t, uistream.CardsTools)
	first := chunks(t, h.post(t, "alice", submit))
	assert.Equal(t, []string{
		`{"type":"start","messageId":"t-1"}`, `{"type":"start-step"}`,
		`{"type":"text-start","id":"text-2"}`, `{"type":"text-delta","id":"text-2","delta":"I can refund $20."}`, `{"type":"text-end","id":"text-2"}`,
		`{"type":"tool-input-start","toolCallId":"card-t-1","toolName":"card"}`,
		`{"type":"tool-input-available","toolCallId":"card-t-1","toolName":"card","input":{"correlationId":"card-t-1","createdAt":1700000000000,"prompt":"Refund $20?","allowDecline":true}}`,
		`{"type":"tool-approval-request","approvalId":"card-t-1","toolCallId":"card-t-1"}`,
		`{"type":"finish-step"}`, `{"type":"finish"}`, "[DONE]",
	}, first)

	for _, c := range []struct {
		name, user, body string
		status           int
		code             refusal.Code
	}{
		{"an approval id that is not the part's", "alice", approval("card-t-1", "card-t-9", true), http.StatusBadRequest, refusal.CodeInvalidInput},
		{"an approval of no card", "alice", approval("card-t-9", "card-t-9", true), http.StatusNotFound, refusal.CodeCardNotFound},
		{"another user's, with rights on the chat", "bob", approval("card-t-1", "card-t-1", true), http.StatusNotFound, refusal.CodeCardNotFound},
		{"another user's, without", "mallory", approval("card-t-1", "card-t-1", true), http.StatusForbidden, refusal.CodeUnauthorized},
		{"no session", "", approval("card-t-1", "card-t-1", true), http.StatusUnauthorized, refusal.CodeUnauthenticated},
	} {
		status, code := codeOf(t, h.post(t, c.user, c.body))
		assert.Equal(t, c.status, status, c.name)
		assert.Equal(t, c.code, code, c.name)
	}
	output := `{"id":"chat-1","trigger":"submit-message","messages":[{"id":"t-1","role":"assistant","parts":[` +
		`{"type":"tool-card","toolCallId":"card-t-1","state":"output-available","input":{},"output":{"approved":true}}]}]}`
	status, code := codeOf(t, h.post(t, "alice", output))
	assert.Equal(t, http.StatusUnprocessableEntity, status, "a confirm card answered by a tool output")
	assert.Equal(t, refusal.CodeInvalidAnswer, code)
	assert.Equal(t, interactions.StatusPending, h.status(t, "card-t-1"))
	require.Equal(t, 1, h.turns(), "a refused answer started a turn")

	second := chunks(t, h.post(t, "alice", approval("card-t-1", "card-t-1", true)))
	require.Equal(t, 2, h.turns())
	assert.Equal(t, []string{`{"type":"start","messageId":"t-1"}`, `{"type":"tool-output-available","toolCallId":"card-t-1","output":{"approved":true}}`,
		`{"type":"start-step"}`}, second[:3], "the continued message, its card's part closed, then the next turn")
	assert.NotContains(t, second, `"type":"data-card"`)
	req := h.request(2)
	assert.Equal(t, "t-1", req.Continues)
	require.Len(t, req.ToolAnswers, 1)
	got := req.ToolAnswers[0]
	assert.False(t, got.Repeated)
	assert.Equal(t, cards.CardActionSubmit, got.Response.Action)
	assert.JSONEq(t, `{"approved":true}`, string(got.Result.Record.Answer.Value))
	assert.Equal(t, interactions.StatusAnswered, h.status(t, "card-t-1"))

	// The same approval again: a repeat, no turn, the part closed again.
	assert.Equal(t, []string{`{"type":"start","messageId":"t-1"}`, `{"type":"tool-output-available","toolCallId":"card-t-1","output":{"approved":true}}`,
		`{"type":"start-step"}`, `{"type":"finish-step"}`, `{"type":"finish"}`, "[DONE]"},
		chunks(t, h.post(t, "alice", approval("card-t-1", "card-t-1", true))))
	// The replay turned into a denial: refused, nothing changes.
	status, code = codeOf(t, h.post(t, "alice", approval("card-t-1", "card-t-1", false)))
	assert.Equal(t, refusal.HTTPStatus(refusal.CodeIdempotencyKeyReused), status)
	assert.Equal(t, refusal.CodeIdempotencyKeyReused, code)
	assert.Equal(t, 2, h.turns(), "a replayed approval started a turn")
	assert.Equal(t, interactions.StatusAnswered, h.status(t, "card-t-1"))
}

// TestCardToolsMapEachAnswer: under CardsTools a refused approval of a
// confirm card that allows a decline lands as a decline and closes the
// part with tool-output-denied; an asking card answered by an approval is
// invalid-answer, and by addToolOutput's output-error lands as a cancel,
// its part closed with tool-output-error.
func TestCardToolsMapEachAnswer(t *testing.T) {
	h := newCardHost(t, uistream.CardsTools)
	chunks(t, h.post(t, "alice", submit))
	denied := chunks(t, h.post(t, "alice", approval("card-t-1", "card-t-1", false)))
	assert.Equal(t, `{"type":"tool-output-denied","toolCallId":"card-t-1"}`, denied[1])
	assert.Equal(t, interactions.StatusDeclined, h.status(t, "card-t-1"))
	assert.Equal(t, cards.CardActionDecline, h.request(2).ToolAnswers[0].Response.Action)

	ask := func(part string) string {
		return `{"id":"chat-1","trigger":"submit-message","messages":[{"id":"t-1","role":"assistant","parts":[` +
			`{"type":"tool-card","toolCallId":"card-t-1","state":"output-denied","input":{},"approval":{"id":"card-t-1","approved":false}},` +
			`{"type":"step-start"},{"type":"tool-card","toolCallId":"card-t-2","input":{},` + part + `}]}]}`
	}
	status, code := codeOf(t, h.post(t, "alice", ask(`"state":"approval-responded","approval":{"id":"card-t-2","approved":true}`)))
	assert.Equal(t, http.StatusUnprocessableEntity, status)
	assert.Equal(t, refusal.CodeInvalidAnswer, code)
	assert.Equal(t, interactions.StatusPending, h.status(t, "card-t-2"))

	cancelled := chunks(t, h.post(t, "alice", ask(`"state":"output-error","errorText":"the form was closed"`)))
	assert.Equal(t, []string{`{"type":"start","messageId":"t-1"}`, `{"type":"tool-output-denied","toolCallId":"card-t-1"}`,
		`{"type":"tool-output-error","toolCallId":"card-t-2","errorText":"the card was cancelled"}`, `{"type":"start-step"}`}, cancelled[:4])
	assert.Equal(t, interactions.StatusCancelled, h.status(t, "card-t-2"))
	third := h.request(3).ToolAnswers
	require.Len(t, third, 2)
	assert.True(t, third[0].Repeated)
	assert.Equal(t, cards.CardActionCancel, third[1].Response.Action)
}
