package wire

import (
	"strings"
	"unicode/utf8"
)

// Storable reports whether s is text every store can hold as sent: valid
// UTF-8 without a NUL character (PostgreSQL's text refuses both, SQLSTATE
// 22021). recovery and interactions refuse other ids with
// [refusal.CodeInvalidInput] before any store is asked.
func Storable(s string) bool {
	return strings.IndexByte(s, 0) < 0 && utf8.ValidString(s)
}
