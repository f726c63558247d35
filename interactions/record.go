package interactions

import (
	"bytes"
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/cards"
)

// RecordVersion is the version of the records this package reads and writes:
// version-1 pending and terminal records (docs/contract.md section 13.2). A
// stored record of any other version is refused with [refusal.ErrUnsupportedVersion].
const RecordVersion = 1

// MaxIDBytes is the longest conversation id, correlation id, submission id,
// scope member or schema id accepted, in bytes (docs/contract.md section 5).
const MaxIDBytes = 256

// Key names one card: the conversation it belongs to and its correlation id
// (the [cards.OpenCardSnapshot].correlationId of docs/contract.md section 3). Both
// are chosen by the host, non-empty and at most [MaxIDBytes] long.
type Key struct {
	Conversation  string `json:"conversation"`
	CorrelationID string `json:"correlationId"`
}

// Caller is the party making a request, as the host's backend authenticated
// it from its own session — never from the request body (docs/contract.md
// section 13.2). Principal is the signed-in person, Tenant and Customer the
// organisation and customer account the session acts for, PublicOwner the
// owner of a conversation opened through a public surface (a visitor of a
// share link); members that do not apply are "". At least one of Principal
// and PublicOwner is non-empty.
type Caller struct {
	Principal   string `json:"principal,omitzero"`
	Tenant      string `json:"tenant,omitzero"`
	Customer    string `json:"customer,omitzero"`
	PublicOwner string `json:"publicOwner,omitzero"`
}

// Scope is the binding of a card, fixed by the backend when the card opens:
// the conversation and the one caller who may answer it (docs/contract.md
// section 13.2). A caller may answer only when the authority the store reads
// inside the fence has exactly this scope; an empty member matches only an
// empty member.
type Scope struct {
	Conversation string `json:"conversation"`
	Caller
}

// SchemaRef names the server-owned JSON Schema an answer is validated
// against: an id and a revision, both immutable once registered
// (docs/contract.md section 13.2). ID is non-empty and at most [MaxIDBytes]
// long; Revision is at least 1.
type SchemaRef struct {
	ID       string `json:"id"`
	Revision int64  `json:"revision"`
}

// Status is where a card stands. Pending is the only non-terminal status; a
// terminal record never changes again.
type Status string

// The statuses of a card.
const (
	// StatusPending: open, waiting for an answer.
	StatusPending Status = "pending"
	// StatusAnswered: a submit was stored.
	StatusAnswered Status = "answered"
	// StatusDeclined: a decline was stored (only when the card allows it).
	StatusDeclined Status = "declined"
	// StatusCancelled: cancelled by the backend (Cancel) or by the person's
	// cancel response.
	StatusCancelled Status = "cancelled"
	// StatusExpired: the deadline passed and Expire stored it.
	StatusExpired Status = "expired"
	// StatusSuperseded: replaced by another card (Supersede).
	StatusSuperseded Status = "superseded"
)

// Terminal reports whether s is a terminal status (every status but
// pending).
func (s Status) Terminal() bool {
	switch s {
	case StatusAnswered, StatusDeclined, StatusCancelled, StatusExpired, StatusSuperseded:
		return true
	}
	return false
}

// Record is the version-1 record of one card as the host's store keeps it
// (docs/contract.md section 13.2). Times are Unix epoch milliseconds from the
// Resolver's clock.
//
// Revision starts at 1 when the card opens and grows by exactly 1 with every
// stored change, metadata (Revise) or terminal; Schema and Spec are
// metadata. ExpiresAt is CreatedAt + Spec.TimeoutMs, or 0 when the card has
// no timeout; the card is expired from that instant on. Answer is set when a
// person's response closed the card (answered, declined, or cancelled by
// the person); Reason is the backend's cancel reason; SupersededBy is the
// correlation id of the replacing card.
//
// The JSON form (the member names below) is stable; a store may persist a
// record as one JSON document or as columns.
type Record struct {
	Version      int            `json:"version"`
	Key          Key            `json:"key"`
	Scope        Scope          `json:"scope"`
	Spec         cards.CardSpec `json:"spec"`
	Schema       SchemaRef      `json:"schema"`
	Revision     int64          `json:"revision"`
	Status       Status         `json:"status"`
	CreatedAt    int64          `json:"createdAt"`
	ExpiresAt    int64          `json:"expiresAt,omitzero"`
	ClosedAt     int64          `json:"closedAt,omitzero"`
	Answer       *Answer        `json:"answer,omitempty"`
	Reason       string         `json:"reason,omitzero"`
	SupersededBy string         `json:"supersededBy,omitzero"`
}

// Answer is a person's stored response. SubmissionID is the client's
// idempotency key; Value is the canonical JSON object of a submit (members
// sorted, no insignificant space, duplicate names and invalid UTF-8 refused)
// and nil otherwise; Digest is the lowercase hex SHA-256 of the action and
// the canonical value, which identifies the submission even when a store
// reformats Value (a PostgreSQL jsonb column does).
type Answer struct {
	SubmissionID string           `json:"submissionId"`
	Action       cards.CardAction `json:"action"`
	Value        json.RawMessage  `json:"value,omitempty"`
	Digest       string           `json:"digest"`
}

// Response returns the answer as the [cards.CardResponse] the person sent, with its
// canonical value.
func (a Answer) Response(correlationID string) cards.CardResponse {
	return cards.CardResponse{Action: a.Action, CorrelationID: correlationID, Value: bytes.Clone(a.Value)}
}

// Expired reports whether the card's deadline has passed at now (epoch
// milliseconds): ExpiresAt is set and now >= ExpiresAt.
func (r Record) Expired(now int64) bool { return r.ExpiresAt > 0 && now >= r.ExpiresAt }

// Snapshot returns the card as an [cards.OpenCardSnapshot] for the STATE channel
// (docs/contract.md section 3): its spec, correlation id, creation time and
// the data schema a renderer needs, as given by the host (typically the
// registered schema text of r.Schema).
func (r Record) Snapshot(dataSchemaJSON string) cards.OpenCardSnapshot {
	return cards.OpenCardSnapshot{
		CorrelationID:  r.Key.CorrelationID,
		CreatedAt:      r.CreatedAt,
		CardSpec:       r.Spec,
		DataSchemaJSON: dataSchemaJSON,
	}
}

// Transition is the workflow transition stored with a terminal record, in the
// same transaction (docs/contract.md section 13.2). The host's workflow reads
// it (an outbox) to resume the paused turn. Status is the terminal status
// reached; Revision the revision of the record that reached it; At its time
// in epoch milliseconds; Response the person's response when one closed the
// card; Reason and SupersededBy as in Record.
type Transition struct {
	Key          Key                 `json:"key"`
	Status       Status              `json:"status"`
	Revision     int64               `json:"revision"`
	At           int64               `json:"at"`
	Response     *cards.CardResponse `json:"response,omitempty"`
	Reason       string              `json:"reason,omitzero"`
	SupersededBy string              `json:"supersededBy,omitzero"`
}

// transitionOf builds the transition that records a terminal next.
func transitionOf(next *Record) *Transition {
	t := &Transition{
		Key: next.Key, Status: next.Status, Revision: next.Revision, At: next.ClosedAt,
		Reason: next.Reason, SupersededBy: next.SupersededBy,
	}
	if next.Answer != nil {
		resp := next.Answer.Response(next.Key.CorrelationID)
		t.Response = &resp
	}
	return t
}

// sameChange reports whether stored holds the change next would have made:
// the same revision and the same content, ignoring the times (CreatedAt,
// ExpiresAt, ClosedAt) a racing identical call stamps differently and
// comparing answers by submission id, action and digest rather than by value
// bytes a store may reformat. It is how the one read after a lost
// acknowledgement recognises this call's write.
func sameChange(stored, next *Record) bool {
	if stored == nil || next == nil {
		return false
	}
	if stored.Version != next.Version || stored.Key != next.Key || stored.Scope != next.Scope ||
		stored.Schema != next.Schema || stored.Revision != next.Revision || stored.Status != next.Status ||
		stored.Reason != next.Reason || stored.SupersededBy != next.SupersededBy {
		return false
	}
	if (stored.Answer == nil) != (next.Answer == nil) {
		return false
	}
	if stored.Answer != nil && !stored.Answer.sameSubmission(*next.Answer) {
		return false
	}
	a, errA := json.Marshal(stored.Spec)
	b, errB := json.Marshal(next.Spec)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// sameSubmission reports whether two answers are the same submission: same
// id, action and digest.
func (a Answer) sameSubmission(b Answer) bool {
	return a.SubmissionID == b.SubmissionID && a.Action == b.Action && a.Digest == b.Digest
}
