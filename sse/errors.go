package sse

import (
	"errors"

	"github.com/Papercusp/chat-protocol-go/internal/wire"
)

// Error is the module's one refusal type (contract-v1.md section 12), the
// same type as chatprotocol.Error: a stable Code, a Path, a Message for
// people only and an optional cause. Branch on it with errors.Is against a
// sentinel below (or the root package's), never on message text.
type Error = wire.Error

// Code is the stable name of a refusal (contract-v1.md section 12).
type Code = wire.Code

// The codes this package returns.
const (
	// CodeFrameTooLarge: the Decoder met a frame (and so a line) longer than
	// DecoderOptions.MaxFrameBytes (contract-v1.md sections 5 and 10).
	CodeFrameTooLarge = wire.CodeFrameTooLarge
	// CodeInvalidFrame: the encoder refused a Frame whose id or event name
	// would inject fields: a CR or LF in either, or a NUL in the id
	// (contract-v1.md section 10).
	CodeInvalidFrame = wire.CodeInvalidFrame
)

// Sentinels for errors.Is. Each is an *Error carrying only its Code, so it
// matches any *Error of that code, including one matched against
// chatprotocol.ErrFrameTooLarge.
var (
	// ErrFrameTooLarge: a frame beyond the decoder's size bound.
	ErrFrameTooLarge = wire.Sentinel(CodeFrameTooLarge)
	// ErrInvalidFrame: a frame the encoder will not write.
	ErrInvalidFrame = wire.Sentinel(CodeInvalidFrame)
)

// ErrClosed is returned by a Writer's Send, Comment and Heartbeat after
// Close. It is not a wire refusal: it reports a use of the Writer after the
// host ended it.
var ErrClosed = errors.New("sse: writer closed")
