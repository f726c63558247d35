package stream

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// maxRefusalBytes bounds the body of a refusal that Follow reads.
const maxRefusalBytes = 64 << 10

// StatusError is a stream endpoint's refusal as Follow returns it: the
// HTTP status and its JSON body, a [refusal.Body] (docs/contract.md
// sections 12.5 and 14.3). Its Unwrap is a [*refusal.Error] of the
// refusal's code, so that [refusal.CodeOf](err) and [errors.Is](err,
// [refusal.ErrStaleCursor]) work on it. A body without a code (a proxy's
// answer) gets the stream's code for the status: 404 turn-not-found, 401
// and 403 unauthorized, 409 cursor-ahead, 410 stale-cursor, 400
// invalid-cursor.
type StatusError struct {
	// StatusCode is the response's HTTP status.
	StatusCode int
	// Body is the response's JSON body, or what the status implies when
	// the body is not a refusal.Body.
	refusal.Body
}

// Error describes the refusal; the text is informative only.
func (e *StatusError) Error() string {
	return fmt.Sprintf("stream: refused with %d %s: %s: %s", e.StatusCode, http.StatusText(e.StatusCode), e.Code, e.Message)
}

// Unwrap returns the refusal as a [*refusal.Error] of its code.
func (e *StatusError) Unwrap() error {
	return &refusal.Error{Code: e.Code, Message: e.Message}
}

// statusCode gives the code of a refusal whose body carries none.
func statusCode(status int) refusal.Code {
	switch status {
	case http.StatusNotFound:
		return refusal.CodeTurnNotFound
	case http.StatusUnauthorized, http.StatusForbidden:
		return refusal.CodeUnauthorized
	case http.StatusConflict:
		return refusal.CodeCursorAhead
	case http.StatusGone:
		return refusal.CodeStaleCursor
	case http.StatusBadRequest:
		return refusal.CodeInvalidCursor
	}
	return ""
}

// readRefusal reads the refusal of resp, whose status is neither 200 nor
// 204 nor one Follow retries.
func readRefusal(resp *http.Response) *StatusError {
	e := &StatusError{StatusCode: resp.StatusCode}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxRefusalBytes))
	if json.Unmarshal(body, &e.Body) != nil {
		e.Body = refusal.Body{}
	}
	if e.Code == "" {
		e.Code = statusCode(resp.StatusCode)
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	return e
}
