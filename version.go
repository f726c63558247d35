package chatprotocol

import (
	"bytes"

	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/Papercusp/chat-protocol-go/internal/strictjson"
)

// ChatVersion is a version of the chat wire contract (docs/contract.md
// section 1): 0 for the unversioned legacy frames, 1 for envelopes.
type ChatVersion int

// The two versions of the contract.
const (
	// ChatVersionLegacy0 is the unversioned frame union ("legacy0"), read
	// only by the explicit adapters of package legacy.
	ChatVersionLegacy0 ChatVersion = 0
	// ChatVersion1 is the [ChatEventEnvelope] with "schemaVersion": 1.
	ChatVersion1 ChatVersion = 1
)

// String returns "legacy0" or "1"; any other value is "unsupported".
func (v ChatVersion) String() string {
	switch v {
	case ChatVersionLegacy0:
		return "legacy0"
	case ChatVersion1:
		return "1"
	}
	return "unsupported"
}

// NegotiateChatVersion reads a requested version, given as the raw JSON value
// a peer sent (nil or empty when it sent none), and accepts exactly the
// explicit values 0 and 1: a JSON number whose value is 0 or 1 (so 1.0 is 1).
// A missing value, null, a future number (2, 3 …), a string ("1"), a boolean,
// a fraction, a negative number, or text that is not one JSON value is
// refused with unsupported-version (docs/contract.md section 1). Unversioned
// frames are never guessed into version 1.
func NegotiateChatVersion(v []byte) (ChatVersion, error) {
	v = bytes.Trim(v, " \t\r\n")
	if len(v) == 0 {
		return 0, refusef(refusal.CodeUnsupportedVersion, "", "no version given: versions are explicit, 0 or 1")
	}
	n, err := strictjson.ParseInteger(v)
	if err != nil || (n != 0 && n != 1) {
		return 0, refusef(refusal.CodeUnsupportedVersion, "", "version %.32q is not 0 or 1", v)
	}
	return ChatVersion(n), nil
}
