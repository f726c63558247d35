// Package wire holds the contract's leaf types: the refusal type with its
// stable codes, and the card shapes. It imports nothing beyond the standard
// library so that every package of the module, including recovery/ and
// interactions/ which must not pull in a validator or a database driver, can
// share one error type and one set of card types.
//
// Users never import this package: the root package chatprotocol re-exports
// every identifier here as a type alias or constant, and the subpackages
// re-export the codes they return.
package wire

import (
	"errors"
	"strings"
)

// Code is the stable, machine-readable name of a refusal, as it appears on
// the wire and in fixtures (contract-v1.md section 12). Callers branch on a
// Code, never on message text. The zero Code is "" and means "no refusal".
type Code string

// Error is the single refusal type of the module (contract-v1.md section 12).
//
// Code is stable and listed in Codes. Path is a JSON pointer (RFC 6901) into
// the refused input where one applies, or "". Message is for people only and
// may change between releases. Err, when set, is the underlying cause and is
// returned by Unwrap.
//
// errors.Is(err, target) holds when target is an *Error whose Message, Path
// and Err are all empty (a sentinel such as ErrSequenceGap) and whose Code
// equals this error's Code; an *Error target with more set is compared by
// identity, as errors.Is does by default.
type Error struct {
	Code    Code
	Path    string
	Message string
	Err     error
}

// Error formats the refusal as "CODE at PATH: message" (the path part only
// when Path is set). The text is informative only.
func (e *Error) Error() string {
	if e == nil {
		return "<nil>"
	}
	var b strings.Builder
	b.WriteString(string(e.Code))
	if e.Path != "" {
		b.WriteString(" at ")
		b.WriteString(e.Path)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause, or nil.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is a sentinel of the same code: an *Error that
// carries only a Code. See the Error type for the full rule.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || e == nil || t == nil {
		return false
	}
	if t.Message != "" || t.Path != "" || t.Err != nil {
		return e == t
	}
	return e.Code == t.Code
}

// Sentinel returns the sentinel for code: an *Error carrying only that code,
// suitable as an errors.Is target.
func Sentinel(code Code) *Error { return &Error{Code: code} }

// New builds a refusal. path is a JSON pointer or "".
func New(code Code, path, message string) *Error {
	return &Error{Code: code, Path: path, Message: message}
}

// Wrap builds a refusal that wraps cause.
func Wrap(code Code, path, message string, cause error) *Error {
	return &Error{Code: code, Path: path, Message: message, Err: cause}
}

// CodeOf returns the Code of the first *Error in err's chain, or "" when
// err is nil or carries no *Error.
func CodeOf(err error) Code {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return ""
}
