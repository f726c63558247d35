package legacy

import (
	"strconv"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Dialect is the vocabulary of a legacy stream, chosen by the host: the
// adapters never guess it from the bytes (docs/contract.md section 9.1).
// Scout's token/content and tool_start/tool map to delta/text and
// tool_call/name; Papercusp keeps its own vocabulary. The zero Dialect is
// not a dialect: every function refuses it, so a host cannot read legacy
// frames without saying which.
type Dialect uint8

// The dialects (docs/contract.md section 9.1).
const (
	// Scout is the shipped version-0 union (docs/contract.md section 2):
	// session, token{content}, tool_start{tool, callId?}, card,
	// card_closed, state, done{usage?}, error{message}, navigate.
	Scout Dialect = iota + 1
	// Papercusp keeps its own vocabulary: delta{text},
	// tool_call{callId?, name, input?} and tool_result{callId?, status,
	// output?} in place of token and tool_start, and the other types of
	// docs/contract.md section 2 unchanged.
	Papercusp
)

// String returns "scout", "papercusp", or "invalid".
func (d Dialect) String() string {
	switch d {
	case Scout:
		return "scout"
	case Papercusp:
		return "papercusp"
	}
	return "invalid"
}

// ParseDialect returns the dialect named s ("scout" or "papercusp", as
// String writes them); ok is false for any other name.
func ParseDialect(s string) (d Dialect, ok bool) {
	for _, d := range []Dialect{Scout, Papercusp} {
		if d.String() == s {
			return d, true
		}
	}
	return 0, false
}

// valid reports whether d is one of the dialects.
func (d Dialect) valid() bool { return d == Scout || d == Papercusp }

// check refuses an invalid dialect with unsupported-version: the host asked
// for a legacy wire variant this module does not speak.
func (d Dialect) check() error {
	if !d.valid() {
		return refusal.New(refusal.CodeUnsupportedVersion, "", "legacy dialect "+strconv.Itoa(int(d))+" is neither Scout nor Papercusp")
	}
	return nil
}
