package chatprotocol

import (
	"errors"
	"strings"
	"testing"
	"unsafe"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/stretchr/testify/assert"
)

// errorsAsError is errors.AsType[*Error], named for the tests' brevity.
func errorsAsError(err error) (*refusal.Error, bool) { return errors.AsType[*refusal.Error](err) }

func TestRefusalsCarryCodePathAndCause(t *testing.T) {
	cause := errors.New("cause")
	err := refuseWrap(refusal.CodeInvalidEvent, "/event/text", "bad", cause)
	assert.ErrorIs(t, err, refusal.ErrInvalidEvent)
	assert.ErrorIs(t, err, cause)
	assert.Equal(t, "/event/text", err.Path)
	f := refusef(refusal.CodeSequenceGap, "/seq", "seq %d", 3)
	assert.ErrorIs(t, f, refusal.ErrSequenceGap)
	assert.Equal(t, "seq 3", f.Message)
	assert.Equal(t, "12", itoa(12))
}

func errorsAsMissing(err error) (*MissingCapabilitiesError, bool) {
	return errors.AsType[*MissingCapabilitiesError](err)
}

// replaceOnce replaces the first old in s, and panics when there is none,
// so that a test never runs on an input it did not mean.
func replaceOnce(s, old, new string) string {
	i := strings.Index(s, old)
	if i < 0 {
		panic("replaceOnce: " + old + " not in " + s)
	}
	return s[:i] + new + s[i+len(old):]
}

// unsafeStringData returns the address of s's first byte, to tell a clone
// from a substring.
func unsafeStringData(s string) *byte { return unsafe.StringData(s) }
