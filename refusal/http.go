package refusal

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
)

// HTTPStatus returns the HTTP status of code on every HTTP surface of the
// module, the table of docs/contract.md section 12.5. Every code of [Codes]
// has one; "" and any other code are 500 Internal Server [Error].
func HTTPStatus(code Code) int {
	switch code {
	case CodeDuplicateAnswer:
		return http.StatusOK
	case CodeInvalidEnvelope, CodeInvalidEvent, CodeUnsupportedEvent, CodeMissingCallID,
		CodeUnknownResultStatus, CodeInvalidCard, CodeInvalidInput, CodeInvalidCursor,
		CodeInvalidTurn, CodeInvalidIdempotencyKey, CodeUnreadableBody:
		return http.StatusBadRequest
	case CodeUnauthenticated:
		return http.StatusUnauthorized
	case CodeUnauthorized:
		return http.StatusForbidden
	case CodeCardNotFound, CodeTurnNotFound, CodeConversationNotFound:
		return http.StatusNotFound
	case CodeMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case CodeForeignFrame, CodeSequenceGap, CodeSequenceReordered, CodeUnknownCall,
		CodeTurnTerminated, CodeCursorAhead, CodeTurnNotRunning, CodeClaimConflict,
		CodeCardExists, CodeAlreadyAnswered, CodeAnswerExpired, CodeCardCancelled,
		CodeCardSuperseded, CodeStaleRevision, CodeSchemaMismatch, CodeNotExpired,
		CodeTurnRunning, CodeConversationExists:
		return http.StatusConflict
	case CodeStaleCursor:
		return http.StatusGone
	case CodeFrameTooLarge:
		return http.StatusRequestEntityTooLarge
	case CodeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case CodeInvalidAnswer, CodeUnsupportedCapability, CodeIdempotencyKeyReused:
		return http.StatusUnprocessableEntity
	case CodeNeedsReconciliation, CodeStoreUnavailable, CodeCheckpointWriteFailed:
		return http.StatusServiceUnavailable
	case CodeInternal, CodeUnknownSchema, CodeUnsupportedVersion, CodeAdmissionUnavailable,
		CodeUnknownEffect, CodeInvalidFrame:
		return http.StatusInternalServerError
	}
	return http.StatusInternalServerError
}

// Body is the JSON body of every refusal on every HTTP surface of the module
// (docs/contract.md section 12.5), and of the answer endpoint's outcomes.
// [Code] and Message are always written; every other member only when set.
// Message is the surface's own words for the code, never an [Error]'s
// Message or cause (section 12.3). Keyword is the JSON Schema keyword that
// refused a value; Status, Revision and Reconciled describe a card's
// record after an answer (section 13.2); Lower and Latest are a replay
// window's bounds, with stale-cursor and cursor-ahead (section 14.3).
type Body struct {
	Code       Code   `json:"code"`
	Path       string `json:"path,omitzero"`
	Keyword    string `json:"keyword,omitzero"`
	Message    string `json:"message"`
	Status     string `json:"status,omitzero"`
	Revision   int64  `json:"revision,omitzero"`
	Reconciled bool   `json:"reconciled,omitzero"`
	Lower      *int64 `json:"lower,omitempty"`
	Latest     *int64 `json:"latest,omitempty"`
}

// BodyOf returns the members of err a client may see (section 12.3): the
// code ([CodeOf]) and the Path of the first *[Error] in err's chain. An
// error without a code is [CodeInternal]; nil gives the zero Body. Message
// is left to the surface.
func BodyOf(err error) Body {
	if err == nil {
		return Body{}
	}
	b := Body{Code: CodeOf(err)}
	if b.Code == "" {
		return Body{Code: CodeInternal}
	}
	if e, ok := errors.AsType[*Error](err); ok {
		b.Path = e.Path
	}
	return b
}

// WriteHTTP writes b as the whole response with status, which is
// [HTTPStatus](b.Code) for every refusal (an outcome that is no refusal,
// such as a stored answer, has its own). It sets Content-Type
// application/json, Cache-Control no-store, X-Content-Type-Options nosniff
// and Content-Length, keeping headers already set (Allow, Retry-After); a
// middleware that compresses or otherwise rewrites the body must drop or
// replace that Content-Length (docs/contract.md section 12.5). A Body
// without a Message gets the status text. Equal arguments give equal
// bytes. It returns the error of writing the body.
func WriteHTTP(w http.ResponseWriter, status int, b Body) error {
	if b.Message == "" {
		b.Message = http.StatusText(status)
	}
	data, err := json.Marshal(b)
	if err != nil { // strings, integers and booleans: cannot fail
		data, status = []byte(`{"code":"internal","message":"Internal Server Error"}`), http.StatusInternalServerError
	}
	data = append(data, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	_, err = w.Write(data)
	return err
}
