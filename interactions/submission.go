package interactions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/Papercusp/chat-protocol-go/internal/wire"
)

// Submission is one person's response to one card, as a request carries it.
//
// ID is the client's idempotency key for this submission (an
// Idempotency-Key header, or an id the renderer generated when it showed the
// card): non-empty, at most [MaxIDBytes]. The same ID with the same action
// and value is the same submission (a retry), anything else a different
// one. Response is the [cards.CardResponse] of docs/contract.md section 3, checked
// by the same shape rules as the root package's ValidateCardResponse (a decline
// or cancel whose Value is JSON null, encoding/json's form of an absent
// member, carries no value); its CorrelationID must equal the key's. Revision, when not 0, is the card
// revision the person saw; the answer is refused with [refusal.ErrStaleRevision] if
// the card has moved since.
//
// None of these fields grants authority: authority comes from the Caller the
// host authenticated and from the store (docs/contract.md section 13.2).
type Submission struct {
	ID       string
	Response cards.CardResponse
	Revision int64
}

// DefaultMaxValueBytes is the default of [Options.MaxValueBytes]: 64 KiB.
const DefaultMaxValueBytes = 64 << 10

// answerOf checks a submission's shape against key and returns the Answer it
// would store: the canonical value and its digest. It refuses with
// ErrInvalidAnswer or ErrFrameTooLarge; it never panics.
func answerOf(key Key, sub Submission, maxValueBytes int) (Answer, error) {
	if sub.ID == "" || len(sub.ID) > MaxIDBytes {
		return Answer{}, refusal.New(refusal.CodeInvalidAnswer, "", "submission id must be 1 to 256 bytes")
	}
	resp := sub.Response
	if resp.Action != cards.CardActionSubmit && string(resp.Value) == "null" {
		resp.Value = nil // encoding/json's form of an absent value
	}
	if err := wire.CheckCorrelation(refusal.CodeInvalidAnswer, key.CorrelationID, resp.CorrelationID); err != nil {
		return Answer{}, err
	}
	if sub.Revision < 0 {
		return Answer{}, refusal.New(refusal.CodeInvalidAnswer, "", "negative revision")
	}
	if resp.Action == cards.CardActionSubmit && len(resp.Value) > maxValueBytes {
		return Answer{}, refusal.New(refusal.CodeFrameTooLarge, "/value", fmt.Sprintf("value over %d bytes", maxValueBytes))
	}
	if vs := wire.ResponseViolations(refusal.CodeInvalidAnswer, resp); len(vs) > 0 {
		return Answer{}, vs[0]
	}
	a := Answer{SubmissionID: sub.ID, Action: resp.Action}
	if a.Action == cards.CardActionSubmit {
		v, err := canonicalObject(resp.Value)
		if err != nil {
			return Answer{}, err
		}
		if err := checkJSONInput("/value", v); err != nil {
			return Answer{}, err
		}
		a.Value = v
	}
	a.Digest = digest(a.Action, a.Value)
	return a, nil
}

// canonicalObject returns raw, which opens an object (the rule of
// wire.ResponseViolations), as a canonical JSON object: members sorted by
// name, no insignificant whitespace, strings in their shortest form, number
// literals kept as sent. It refuses anything but one JSON value, a
// duplicated member name and invalid UTF-8 (RFC 7493), so that the value
// validated, digested and stored is the one every later reader parses the
// same way.
func canonicalObject(raw json.RawMessage) (json.RawMessage, error) {
	v := jsontext.Value(raw).Clone()
	if err := v.Format(jsontext.ReorderRawObjects(true)); err != nil {
		return nil, refusal.Wrap(refusal.CodeInvalidAnswer, "/value", "value is not valid JSON (RFC 7493)", err)
	}
	return json.RawMessage(v), nil
}

// digest is the lowercase hex SHA-256 of action, a NUL byte and the
// canonical value.
func digest(action cards.CardAction, value json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(action))
	h.Write([]byte{0})
	h.Write(value)
	return hex.EncodeToString(h.Sum(nil))
}
