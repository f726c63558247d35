package conversation

import (
	"errors"
	"net/url"
	"strings"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// String is the principal as recovery's and the cancel endpoint's caller
// string carries it (docs/contract.md section 20.2): its tenant and its id,
// each query-escaped, joined by one space (which the escaping never
// writes); [ParsePrincipal] reads it back.
func (p Principal) String() string {
	return url.QueryEscape(p.Tenant) + " " + url.QueryEscape(p.ID)
}

// ParsePrincipal reads a caller string [Principal.String] wrote; anything
// else is unauthorized.
func ParsePrincipal(s string) (Principal, error) {
	tenant, id, ok := strings.Cut(s, " ")
	bad := refusal.New(refusal.CodeUnauthorized, "", "conversation: not a caller this module wrote")
	if !ok {
		return Principal{}, bad
	}
	var err1, err2 error
	var p Principal
	p.Tenant, err1 = url.QueryUnescape(tenant)
	p.ID, err2 = url.QueryUnescape(id)
	if errors.Join(err1, err2) != nil || p.ID == "" || p.String() != s {
		return Principal{}, bad
	}
	return p, nil
}
