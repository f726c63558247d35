package stream

import (
	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// maxCursorDigits is the number of decimal digits of chatprotocol.MaxSeq.
const maxCursorDigits = 16

// ParseCursor reads a resume cursor as a client sends it in Last-Event-ID
// (docs/contract.md sections 10 and 14): the canonical decimal form of a
// seq from 0 to 2^53-1 ([chatprotocol.MaxSeq]), ASCII digits only, without a
// sign, spaces, a leading zero (but "0" itself) or any other byte. "" is
// not a cursor: a request without one starts from 0.
//
// Anything else is refused with a [*refusal.Error] of code invalid-cursor
// ([refusal.ErrInvalidCursor]) and path "/lastEventId".
func ParseCursor(s string) (int64, error) {
	if s == "" || len(s) > maxCursorDigits {
		return 0, errBadCursor("a cursor is 1 to 16 decimal digits")
	}
	if s[0] == '0' && len(s) > 1 {
		return 0, errBadCursor("a cursor has no leading zero")
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, errBadCursor("a cursor is decimal digits only")
		}
		n = n*10 + int64(c-'0')
	}
	if n > chatprotocol.MaxSeq {
		return 0, errBadCursor("a cursor is at most 2^53-1")
	}
	return n, nil
}

func errBadCursor(msg string) error {
	return &refusal.Error{Code: refusal.CodeInvalidCursor, Path: "/lastEventId", Message: msg}
}
