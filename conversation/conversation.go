package conversation

import (
	"strings"
	"unicode/utf8"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// MaxIDBytes is the longest conversation id, turn id or principal member
// accepted, in bytes, the bound docs/contract.md section 5 puts on ids.
const MaxIDBytes = 256

// Principal is a party as the host authenticated it from its own session,
// never from a request's body (docs/contract.md section 20.2): ID the
// signed-in person, API key or service, Tenant the organisation it acts
// for ("" when none). A conversation's owner is a Principal. Principal is
// comparable.
type Principal struct {
	ID     string
	Tenant string
}

// Conversation is a conversation's record: its id, its owner, how many
// turns it has started, and its running turn's id ("" when none).
type Conversation struct {
	ID      string
	Owner   Principal
	Turns   int
	Running string
}

// Turn is one turn of a conversation (docs/contract.md section 20.1):
// Position counts from 1 in start order; UserText is the user's message
// that started it; Key is the request key of its start ("" when none,
// [TurnStart]); State is the turn's reduced state, the JSON form of a
// turn of the version-1 state as the root package's TurnState writes it
// (its MarshalJSON), stored when the turn ended, nil while it runs.
type Turn struct {
	ID       string
	Position int
	UserText string
	Key      string
	State    []byte
}

// TurnStart is what a start of a turn carries ([Store.StartTurn],
// docs/contract.md section 20.1): UserText, the user's message, and Key,
// the client's id of the request that asks for the turn (AG-UI's runId,
// a resent user message's id), "" for none. A start whose Key names a turn
// of the conversation started with that Key gets that turn back and starts
// nothing, so a client that sends its start again, to any instance, gets
// its own turn. A Key is bounded like an id ([MaxIDBytes], valid UTF-8,
// no NUL).
type TurnStart struct {
	UserText string
	Key      string
}

// Ended reports whether the turn's reduced state is stored.
func (t Turn) Ended() bool { return t.State != nil }

// checkID refuses an id a store cannot hold: empty, over MaxIDBytes, not
// valid UTF-8, or holding NUL (code invalid-input).
func checkID(what, id string) error {
	if id == "" || len(id) > MaxIDBytes || !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		return refusal.New(refusal.CodeInvalidInput, "", "conversation: an invalid "+what)
	}
	return nil
}

// checkText refuses text no store can hold as sent: invalid UTF-8 or a NUL.
func checkText(what, s string) error {
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return refusal.New(refusal.CodeInvalidInput, "", "conversation: an invalid "+what)
	}
	return nil
}

// CheckConversation refuses with invalid-input an id the stores cannot
// hold: empty, over [MaxIDBytes], not valid UTF-8, or holding NUL. Stores
// call it before they read or write.
func CheckConversation(id string) error { return checkID("conversation id", id) }

// CheckTurn refuses, like [CheckConversation], a conversation or turn id
// the stores cannot hold.
func CheckTurn(conversationID, turnID string) error {
	if err := CheckConversation(conversationID); err != nil {
		return err
	}
	return checkID("turn id", turnID)
}

// CheckOwner refuses with invalid-input an owner without an ID, or one
// whose members a store cannot hold.
func CheckOwner(p Principal) error {
	if err := checkID("owner", p.ID); err != nil {
		return err
	}
	if len(p.Tenant) > MaxIDBytes {
		return refusal.New(refusal.CodeInvalidInput, "", "conversation: an invalid tenant")
	}
	return checkText("tenant", p.Tenant)
}

// CheckUserText refuses with invalid-input a user's text a store cannot
// hold as sent (invalid UTF-8, a NUL).
func CheckUserText(s string) error { return checkText("user text", s) }

// CheckTurnStart refuses with invalid-input a start a store cannot hold:
// its user's text as [CheckUserText] does, and a Key other than "" that
// is over [MaxIDBytes], not valid UTF-8 or holding NUL. Stores call it
// before they write.
func CheckTurnStart(start TurnStart) error {
	if err := CheckUserText(start.UserText); err != nil {
		return err
	}
	if start.Key == "" {
		return nil
	}
	return checkID("request key", start.Key)
}
