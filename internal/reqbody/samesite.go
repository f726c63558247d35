package reqbody

import (
	"net/http"

	"github.com/Papercusp/chat-protocol-go/internal/mediatype"
)

// RequestedWith is the header by which a request without a body, such as
// a cancel, shows it is not a cross-site form: X-Requested-With, with any
// non-empty value. It is not a CORS-safelisted request header, so a page
// of another site can send it only through a CORS preflight the host
// allows, and no HTML form or navigation sends it at all; it is also the
// header that libraries and CSRF guides already use for this.
const RequestedWith = "X-Requested-With"

// SameSite reports whether a request with header h may change state: it
// is one that a page of another site cannot make a browser send, with the
// user's cookies, without a CORS preflight (docs/contract.md section 12.6).
// That is a request whose Content-Type is application/json
// ([mediatype.ApplicationJSON]), or one without a Content-Type that
// carries a non-empty value of one of marks, names of headers that are not
// CORS-safelisted ([RequestedWith], Idempotency-Key). A form's types
// (text/plain, application/x-www-form-urlencoded, multipart/form-data),
// any other type, or none without a mark is refused: the caller answers
// 415 unsupported-media-type.
func SameSite(h http.Header, marks ...string) bool {
	switch mediatype.Of(h) {
	case mediatype.ApplicationJSON:
		return true
	case mediatype.None:
		for _, m := range marks {
			if h.Get(m) != "" {
				return true
			}
		}
	}
	return false
}
