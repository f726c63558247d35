package refusal

import (
	"errors"
	"strings"
)

// Code is the stable, machine-readable name of a refusal, as it appears on
// the wire and in fixtures (docs/contract.md section 12). Callers branch on a
// Code, never on message text. The zero Code is "" and means "no refusal";
// [Codes] lists every code.
type Code string

// Error is the module's one refusal type (docs/contract.md section 12.1).
// Every package of the module returns it; branch with [errors.Is] against a
// [Sentinel] ([ErrSequenceGap] …), errors.AsType[*Error] or [CodeOf], never
// on message text. [errors.Is](err, s) holds when s is the Sentinel of the
// error's [Code]; an *Error target is compared by identity, as [errors.Is] does
// by default. Only [Code] and Path are safe to show a client (section 12.3).
type Error struct {
	// Code is stable and machine-readable, as the fixtures write it.
	Code Code
	// Path is the JSON pointer (RFC 6901) of the offending member, or ""
	// where none applies.
	Path string
	// Message is for people only and may change between releases.
	Message string
	// Err is the optional cause, returned by Unwrap; it may quote a
	// store's own error text.
	Err error
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
// target, an [*Error] included, is compared by identity as [errors.Is] does by
// default.
func (e *Error) Is(target error) bool {
	s, ok := target.(Sentinel)
	return ok && e != nil && e.Code == Code(s)
}

// Sentinel is the [errors.Is] target of one code: [errors.Is](err, s) holds for
// every [*Error] of that code in err's chain, and for s itself, whatever wraps
// it. Sentinels are constants, so no assignment anywhere changes what one
// matches; a store may return one as its error.
type Sentinel Code

// Error returns the code.
func (s Sentinel) Error() string { return string(s) }

// New returns a refusal of code at path, a JSON pointer or "".
func New(code Code, path, message string) *Error {
	return &Error{Code: code, Path: path, Message: message}
}

// Wrap returns a refusal of code at path that wraps cause.
func Wrap(code Code, path, message string, cause error) *Error {
	return &Error{Code: code, Path: path, Message: message, Err: cause}
}

// CodeOf returns the [Code] of the first [*Error] or Sentinel in err's chain,
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
