// Package wire holds the contract's leaf types: the refusal type (its codes
// are declared in package refusal), the card shapes and the block shapes. It imports nothing of
// the module's public packages, so that every one of them, recovery/ and
// interactions/ included (which must not pull in a validator or a database
// driver), shares one error type, one set of card types and one set of card
// rules.
//
// Users never import this package: refusal, the root package, blocks and
// interactions give its identifiers their public names.
package wire

import (
	"errors"
	"strings"
)

// Code is the stable, machine-readable name of a refusal, as it appears on
// the wire and in fixtures (docs/contract.md section 12). Callers branch on a
// Code, never on message text. The zero Code is "" and means "no refusal".
type Code string

// Error is the single refusal type of the module (docs/contract.md section 12).
//
// Code is stable and listed in refusal.Codes. Path is a JSON pointer (RFC 6901) into
// the refused input where one applies, or "". Message is for people only and
// may change between releases. Err, when set, is the underlying cause and is
// returned by Unwrap.
//
// errors.Is(err, s) holds when s is the Sentinel of the error's Code (such
// as refusal.ErrSequenceGap); an *Error target is compared by identity, as
// errors.Is does by default.
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

// Is reports whether target is the Sentinel of this error's code. Any other
// target, an *Error included, is compared by identity as errors.Is does by
// default.
func (e *Error) Is(target error) bool {
	s, ok := target.(Sentinel)
	return ok && e != nil && e.Code == Code(s)
}

// Sentinel is the errors.Is target of one code: errors.Is(err, s) holds for
// every *Error of that code in err's chain, and for s itself. Sentinels are
// constants, so no assignment anywhere changes what one matches.
type Sentinel Code

// Error returns the code.
func (s Sentinel) Error() string { return string(s) }

// New builds a refusal. path is a JSON pointer or "".
func New(code Code, path, message string) *Error {
	return &Error{Code: code, Path: path, Message: message}
}

// Wrap builds a refusal that wraps cause.
func Wrap(code Code, path, message string, cause error) *Error {
	return &Error{Code: code, Path: path, Message: message, Err: cause}
}

// CodeOf returns the Code of the first *Error or Sentinel in err's chain,
// or "" when err is nil or carries neither.
func CodeOf(err error) Code {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	if s, ok := errors.AsType[Sentinel](err); ok {
		return Code(s)
	}
	return ""
}
