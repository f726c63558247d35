// Package mediatype is the one reading of a request's Content-Type that
// every HTTP surface of the module that changes state shares, through
// reqbody's same-site rule: the answer endpoint, the cancel endpoint and
// the front-end bridges (docs/contract.md section 12.6).
package mediatype

import (
	"mime"
	"net/http"
	"strings"
)

// Kind is what a request's Content-Type says of its body.
type Kind int

// The kinds of [Of].
const (
	// None is a request without a Content-Type header.
	None Kind = iota
	// ApplicationJSON is one Content-Type, application/json with any parameters, a
	// charset only if utf-8 (the media type and the charset in any case).
	ApplicationJSON
	// Other is anything else: another media type, one that does not
	// parse, a charset other than utf-8, or more than one header.
	Other
)

// Of returns the kind of header's Content-Type. A surface refuses [Other]
// with unsupported-media-type (415); whether it takes [None] is its own
// rule, and docs/contract.md section 12.6 says why they differ.
func Of(header http.Header) Kind {
	values := header.Values("Content-Type")
	if len(values) == 0 {
		return None
	}
	mediaType, params, err := mime.ParseMediaType(values[0])
	if len(values) > 1 || err != nil || mediaType != "application/json" {
		return Other
	}
	if charset, ok := params["charset"]; ok && !strings.EqualFold(charset, "utf-8") {
		return Other
	}
	return ApplicationJSON
}
