package stream

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/Papercusp/chat-protocol-go/refusal"
	"github.com/Papercusp/chat-protocol-go/replay"
)

// ErrorBody is the JSON body of every answer of the Handler other than 200
// and 204 (docs/contract.md section 14):
//
//	{"code":"stale-cursor","message":"...","lower":L,"latest":N}
//
// Code is a refusal code (docs/contract.md section 12); Message is for
// people only. Lower and Latest are the window's bounds, present for
// stale-cursor and cursor-ahead only.
type ErrorBody struct {
	Code    refusal.Code `json:"code"`
	Message string       `json:"message"`
	Lower   *int64       `json:"lower,omitempty"`
	Latest  *int64       `json:"latest,omitempty"`
}

// The answers that carry no detail of the request, built once so that an
// unknown turn and a caller without rights get the same bytes.
var (
	bodyNotFound    = mustBody(ErrorBody{Code: refusal.CodeTurnNotFound, Message: "no such turn"})
	bodyUnavailable = mustBody(ErrorBody{Code: refusal.CodeStoreUnavailable, Message: "the stream is unavailable; retry later"})
	bodyClosed      = mustBody(ErrorBody{Code: refusal.CodeStoreUnavailable, Message: "the server is shutting down; retry later"})
)

func mustBody(r ErrorBody) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err) // a fixed value of a fixed type: cannot fail
	}
	return append(b, '\n')
}

// writeBody writes status with a JSON body and the headers every refusal
// carries: no caching, no sniffing.
func writeBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// writeRefusal writes status with an ErrorBody of code and message, and the
// bounds b unless b is nil.
func writeRefusal(w http.ResponseWriter, status int, code refusal.Code, message string, b *replay.Bounds) {
	r := ErrorBody{Code: code, Message: message}
	if b != nil {
		r.Lower, r.Latest = &b.Lower, &b.Latest
	}
	body, _ := json.Marshal(r) // strings and integers: cannot fail
	writeBody(w, status, append(body, '\n'))
}
