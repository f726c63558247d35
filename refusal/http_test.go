package refusal_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// The table of docs/contract.md section 12.5, written out: every code of
// the module has exactly the status the contract gives it, and a code
// added to Codes fails here until it has one.
func TestHTTPStatusOfEveryCode(t *testing.T) {
	want := map[refusal.Code]int{
		refusal.CodeDuplicateAnswer: 200,

		refusal.CodeInvalidEnvelope: 400, refusal.CodeInvalidEvent: 400, refusal.CodeUnsupportedEvent: 400,
		refusal.CodeMissingCallID: 400, refusal.CodeUnknownResultStatus: 400, refusal.CodeInvalidCard: 400,
		refusal.CodeInvalidInput: 400, refusal.CodeInvalidCursor: 400, refusal.CodeInvalidTurn: 400,
		refusal.CodeInvalidIdempotencyKey: 400, refusal.CodeUnreadableBody: 400,

		refusal.CodeUnauthenticated: 401,
		refusal.CodeUnauthorized:    403,
		refusal.CodeCardNotFound:    404, refusal.CodeTurnNotFound: 404, refusal.CodeConversationNotFound: 404,
		refusal.CodeMethodNotAllowed: 405,

		refusal.CodeForeignFrame: 409, refusal.CodeSequenceGap: 409, refusal.CodeSequenceReordered: 409,
		refusal.CodeUnknownCall: 409, refusal.CodeTurnTerminated: 409, refusal.CodeCursorAhead: 409,
		refusal.CodeTurnNotRunning: 409, refusal.CodeClaimConflict: 409, refusal.CodeCardExists: 409,
		refusal.CodeAlreadyAnswered: 409, refusal.CodeAnswerExpired: 409, refusal.CodeCardCancelled: 409,
		refusal.CodeCardSuperseded: 409, refusal.CodeStaleRevision: 409, refusal.CodeSchemaMismatch: 409,
		refusal.CodeNotExpired: 409, refusal.CodeTurnRunning: 409, refusal.CodeConversationExists: 409,

		refusal.CodeStaleCursor:          410,
		refusal.CodeFrameTooLarge:        413,
		refusal.CodeUnsupportedMediaType: 415,

		refusal.CodeInvalidAnswer: 422, refusal.CodeUnsupportedCapability: 422, refusal.CodeIdempotencyKeyReused: 422,

		refusal.CodeInternal: 500, refusal.CodeUnknownSchema: 500, refusal.CodeUnsupportedVersion: 500,
		refusal.CodeAdmissionUnavailable: 500, refusal.CodeUnknownEffect: 500, refusal.CodeInvalidFrame: 500,

		refusal.CodeNeedsReconciliation: 503, refusal.CodeStoreUnavailable: 503, refusal.CodeCheckpointWriteFailed: 503,
	}
	all := refusal.Codes()
	assert.Len(t, want, len(all), "the table above lists every code once")
	for _, code := range all {
		status, ok := want[code]
		if assert.True(t, ok, "%s has no status in the table above", code) {
			assert.Equal(t, status, refusal.HTTPStatus(code), "%s", code)
		}
	}
	assert.Equal(t, http.StatusInternalServerError, refusal.HTTPStatus(""))
	assert.Equal(t, http.StatusInternalServerError, refusal.HTTPStatus("no-such-code"))
}

// Every member goes out and comes back; the members that are not set are
// not written, and the bounds are written even when 0.
func TestBodyRoundTrip(t *testing.T) {
	lower, latest := int64(0), int64(22)
	for _, b := range []refusal.Body{
		{Code: refusal.CodeInvalidAnswer, Path: "/value/optionId", Keyword: "enum", Message: "m"},
		{Code: refusal.CodeDuplicateAnswer, Message: "m", Status: "answered", Revision: 2, Reconciled: true},
		{Code: refusal.CodeStaleCursor, Message: "m", Lower: &lower, Latest: &latest},
		{Code: refusal.CodeTurnNotFound, Message: "m"},
	} {
		data, err := json.Marshal(b)
		require.NoError(t, err)
		var back refusal.Body
		require.NoError(t, json.Unmarshal(data, &back))
		assert.Equal(t, b, back)
	}
	data, err := json.Marshal(refusal.Body{Code: refusal.CodeTurnNotFound, Message: "no such turn"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":"turn-not-found","message":"no such turn"}`, string(data))
	data, err = json.Marshal(refusal.Body{Code: refusal.CodeStaleCursor, Message: "m", Lower: &lower, Latest: &latest})
	require.NoError(t, err)
	assert.JSONEq(t, `{"code":"stale-cursor","message":"m","lower":0,"latest":22}`, string(data))
}

// WriteHTTP writes the status, the headers every refusal carries (and
// keeps those the surface set), and the body; a Body without a message
// gets the status text.
func TestWriteHTTP(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Allow", "POST")
	b := refusal.Body{Code: refusal.CodeMethodNotAllowed}
	require.NoError(t, refusal.WriteHTTP(rec, refusal.HTTPStatus(b.Code), b))
	assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	h := rec.Header()
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Equal(t, "no-store", h.Get("Cache-Control"))
	assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	assert.Equal(t, "POST", h.Get("Allow"))
	assert.Equal(t, strconv.Itoa(rec.Body.Len()), h.Get("Content-Length"))
	assert.Equal(t, `{"code":"method-not-allowed","message":"Method Not Allowed"}`+"\n", rec.Body.String())

	again := httptest.NewRecorder()
	require.NoError(t, refusal.WriteHTTP(again, http.StatusMethodNotAllowed, b))
	assert.Equal(t, rec.Body.Bytes(), again.Body.Bytes(), "equal arguments, equal bytes")
}

// BodyOf keeps only what a client may see: the code and the path, never
// the message or the cause; an error without a code is internal.
func TestBodyOf(t *testing.T) {
	err := fmt.Errorf("store: %w", refusal.Wrap(refusal.CodeInvalidAnswer, "/value", "secret message", errors.New("SQLSTATE 42501")))
	assert.Equal(t, refusal.Body{Code: refusal.CodeInvalidAnswer, Path: "/value"}, refusal.BodyOf(err))
	assert.Equal(t, refusal.Body{Code: refusal.CodeClaimConflict}, refusal.BodyOf(fmt.Errorf("x: %w", refusal.ErrClaimConflict)))
	assert.Equal(t, refusal.Body{Code: refusal.CodeInternal}, refusal.BodyOf(errors.New("SQLSTATE 42501")))
	assert.Equal(t, refusal.Body{}, refusal.BodyOf(nil))
}
