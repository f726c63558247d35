package refusal

import "github.com/Papercusp/chat-protocol-go/internal/wire"

// Error is the module's one refusal type (docs/contract.md section 12), a
// struct with the fields
//
//	Code    Code   // stable, as in the fixtures: "sequence-gap" …
//	Path    string // JSON pointer (RFC 6901) of the offending member, "" when none applies
//	Message string // for people only; may change between releases
//	Err     error  // the optional cause, returned by Unwrap
//
// Every package of the module returns it. Branch with errors.Is against a
// sentinel (ErrSequenceGap …), errors.AsType[*Error] or CodeOf, never on
// message text. What is safe to show a client is the Code and the Path:
// Message and Err may quote a store's own error text.
type Error = wire.Error

// Code is the stable name of a refusal, as written on the wire and in the
// fixtures (docs/contract.md section 12). The zero Code "" means no refusal.
type Code = wire.Code

// Sentinel is the errors.Is target of one Code: errors.Is(err, s) holds for
// every *Error of that code in err's chain, and for s itself, whatever wraps
// it. The sentinels are constants: no assignment anywhere changes what
// they match. A store may return one as its error.
type Sentinel = wire.Sentinel

// CodeOf returns the Code of the first *Error or Sentinel in err's chain, or
// "" when err is nil or carries neither.
func CodeOf(err error) Code { return wire.CodeOf(err) }
