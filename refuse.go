package chatprotocol

import (
	"fmt"
	"strconv"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// refusef builds the *Error of a refusal with a formatted message.
func refusef(code refusal.Code, path, format string, args ...any) *refusal.Error {
	return refusal.New(code, path, fmt.Sprintf(format, args...))
}

// refuseWrap builds the *Error of a refusal that wraps its cause.
func refuseWrap(code refusal.Code, path, message string, cause error) *refusal.Error {
	return refusal.Wrap(code, path, message, cause)
}

// itoa formats an array index for a JSON pointer.
func itoa(i int) string { return strconv.Itoa(i) }
