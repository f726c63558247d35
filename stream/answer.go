package stream

import (
	"net/http"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// The Handler's words for the codes it answers (docs/contract.md section
// 14.3); an unknown turn and a caller without rights get the same bytes.
const (
	msgNotFound    = "no such turn"
	msgUnavailable = "the stream is unavailable; retry later"
	msgClosed      = "the server is shutting down; retry later"
	msgStale       = "the cursor is below the retained lower bound; start again from the turn's history"
	msgAhead       = "the cursor is beyond the latest seq"
	msgMethod      = "a stream is read with GET"
)

// writeRefusal answers a refusal of code with the Handler's message for it,
// the status of docs/contract.md section 12.5 and a refusal.Body, with the
// window's bounds b unless b is nil.
func writeRefusal(w http.ResponseWriter, code refusal.Code, message string, b *replay.Bounds) {
	body := refusal.Body{Code: code, Message: message}
	if b != nil {
		body.Lower, body.Latest = &b.Lower, &b.Latest
	}
	_ = refusal.WriteHTTP(w, refusal.HTTPStatus(code), body) // a client gone away is noticed by the caller
}
