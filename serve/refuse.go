package serve

import (
	"net/http"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// Refuse answers a refusal of code with message, the surface's own words,
// through the module's one body and status table (docs/contract.md section
// 12.5).
func Refuse(w http.ResponseWriter, code refusal.Code, message string) {
	_ = refusal.WriteHTTP(w, refusal.HTTPStatus(code), refusal.Body{Code: code, Message: message}) // a client gone away is noticed by the caller
}

// RefuseBounds is Refuse with the window's bounds b, for stale-cursor and
// cursor-ahead (section 14.3).
func RefuseBounds(w http.ResponseWriter, code refusal.Code, message string, b replay.Bounds) {
	_ = refusal.WriteHTTP(w, refusal.HTTPStatus(code), refusal.Body{Code: code, Message: message, Lower: &b.Lower, Latest: &b.Latest})
}

// Unavailable answers 503 store-unavailable with message and the Engine's
// Retry-After ([Engine.RetryAfter]).
func (e *Engine) Unavailable(w http.ResponseWriter, message string) {
	w.Header().Set("Retry-After", e.RetryAfter())
	Refuse(w, refusal.CodeStoreUnavailable, message)
}
