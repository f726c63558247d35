package chatprotocol

import (
	"encoding/json"

	"github.com/Papercusp/chat-protocol-go/blocks"
	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Event is one version-1 event, the payload of a [ChatEventEnvelope]
// (docs/contract.md section 6): a [*SessionEvent], [*LifecycleEvent],
// [*DeltaEvent], [*ToolCallEvent], [*ToolResultEvent], [*ResultEvent],
// [*ProvenanceEvent], [*ErrorEvent], [*StepEvent], [*CardEvent], [*CardClosedEvent],
// [*StateEvent], [*CapabilitiesEvent], [*NavigateEvent], or an [*AppEvent] for
// a product type the host registered. The set is sealed: no other type
// implements Event.
//
// EventType returns the wire name of the event's type ("delta" …). Each
// concrete type also has MarshalJSON, which writes the canonical event object.
type Event interface {
	EventType() string
	isEvent()
}

// The event types of version 1 (docs/contract.md section 6).
const (
	EventTypeSession      = "session"
	EventTypeLifecycle    = "lifecycle"
	EventTypeDelta        = "delta"
	EventTypeToolCall     = "tool_call"
	EventTypeToolResult   = "tool_result"
	EventTypeResult       = "result"
	EventTypeProvenance   = "provenance"
	EventTypeError        = "error"
	EventTypeStep         = "step"
	EventTypeCard         = "card"
	EventTypeCardClosed   = "card_closed"
	EventTypeState        = "state"
	EventTypeCapabilities = "capabilities"
	EventTypeNavigate     = "navigate"
)

// EventTypes returns the fourteen event types of version 1 in the order of
// docs/contract.md section 6; the slice is new on each call.
func EventTypes() []string {
	types := make([]string, len(eventSpecs))
	for i := range eventSpecs {
		types[i] = eventSpecs[i].typ
	}
	return types
}

// EventChannel returns the channel of a version-1 event type
// (docs/contract.md section 6): EVENT for session, lifecycle, delta,
// tool_call, tool_result, result, provenance, error and step; STATE for card,
// card_closed, state and capabilities; TRANSIENT for navigate. For any
// other type it returns ok == false; a host's product types have the
// channel their Registry gives.
func EventChannel(eventType string) (ch Channel, ok bool) {
	if s := eventSpecOf(eventType); s != nil {
		return s.channel, true
	}
	return 0, false
}

// maxIDBytes is the longest id the contract allows, in bytes (docs/contract.md section 5).
const maxIDBytes = 256

// checkID enforces the id rule of docs/contract.md section 5 (non-empty, at most 256 bytes)
// on the id in member of the object at path, refusing with code.
func checkID(code refusal.Code, path, member, id string) error {
	if id == "" {
		return refusef(code, path+"/"+member, "must be a non-empty string")
	}
	if len(id) > maxIDBytes {
		return refusef(code, path+"/"+member, "is %d bytes, more than %d", len(id), maxIDBytes)
	}
	return nil
}

// SessionEvent names the host's session (docs/contract.md section 6, channel EVENT).
// SessionID follows the id rule: non-empty, at most 256 bytes.
type SessionEvent struct {
	SessionID string
	Unknown   []Member
}

// LifecycleStatus is the state a turn reports (docs/contract.md section 6).
type LifecycleStatus string

// LifecycleStarted is the status of a turn under way.
const LifecycleStarted LifecycleStatus = "started"

// The terminal statuses: a turn ends with one of them (docs/contract.md section 7).
const (
	LifecycleCompleted LifecycleStatus = "completed"
	LifecycleFailed    LifecycleStatus = "failed"
	LifecycleCancelled LifecycleStatus = "cancelled"
)

// The statuses of a turn stopped short of its end: interrupted and
// needs-reconciliation are not terminal, the turn may still go on to a
// terminal status (docs/contract.md section 7).
const (
	LifecycleInterrupted         LifecycleStatus = "interrupted"
	LifecycleNeedsReconciliation LifecycleStatus = "needs-reconciliation"
)

// Valid reports whether s is one of the six statuses of docs/contract.md section 6.
func (s LifecycleStatus) Valid() bool {
	switch s {
	case LifecycleStarted, LifecycleCompleted, LifecycleFailed, LifecycleCancelled,
		LifecycleInterrupted, LifecycleNeedsReconciliation:
		return true
	}
	return false
}

// Terminal reports whether s ends a turn: completed, failed or cancelled
// (docs/contract.md section 7).
func (s LifecycleStatus) Terminal() bool {
	return s == LifecycleCompleted || s == LifecycleFailed || s == LifecycleCancelled
}

// LifecycleEvent reports a turn's status (docs/contract.md section 6, channel EVENT). Reason
// is optional free text ("" when absent); Usage is optional.
type LifecycleEvent struct {
	Status  LifecycleStatus
	Reason  string
	Usage   *Usage
	Unknown []Member
}

// Usage is what a turn consumed: optional total tokens (a non-negative
// integer) and optional cost in US dollars (a non-negative finite number).
// A nil pointer is an absent member.
type Usage struct {
	TotalTokens *int64
	CostUSD     *float64
	Unknown     []Member
}

// DeltaEvent is a piece of the turn's text, appended in seq order (section
// 6, channel EVENT). Text may be empty.
type DeltaEvent struct {
	Text    string
	Unknown []Member
}

// ToolCallEvent opens a tool call (docs/contract.md section 6, channel EVENT). CallID is the
// host's stable id of the call (required: without it, missing-call-id),
// Name the tool's name (non-empty), Input the optional JSON input (nil when
// absent).
type ToolCallEvent struct {
	CallID  string
	Name    string
	Input   json.RawMessage
	Unknown []Member
}

// ToolResultStatus is how a tool call ended (docs/contract.md section 6).
type ToolResultStatus string

// The tool result statuses. Any other value is refused with
// unknown-result-status, never mapped to a guess.
const (
	ToolResultOK        ToolResultStatus = "ok"
	ToolResultError     ToolResultStatus = "error"
	ToolResultCancelled ToolResultStatus = "cancelled"
)

// Valid reports whether s is ok, error or cancelled.
func (s ToolResultStatus) Valid() bool {
	return s == ToolResultOK || s == ToolResultError || s == ToolResultCancelled
}

// ToolResultEvent closes a tool call (docs/contract.md section 6, channel EVENT): the call's
// CallID (required: missing-call-id), its Status (required:
// unknown-result-status), the optional JSON Output (nil when absent) and
// optional grounded result Blocks.
type ToolResultEvent struct {
	CallID  string
	Status  ToolResultStatus
	Output  json.RawMessage
	Blocks  []ResultBlock
	Unknown []Member
}

// ResultEvent carries the turn's grounded result blocks (docs/contract.md section 6,
// channel EVENT). Blocks is required and may be empty.
type ResultEvent struct {
	Blocks  []ResultBlock
	Unknown []Member
}

// ResultBlockKind is the kind of a grounded result block (docs/contract.md section 6).
type ResultBlockKind string

// The result block kinds.
const (
	ResultBlockText   ResultBlockKind = "text"
	ResultBlockReport ResultBlockKind = "report"
	ResultBlockAsk    ResultBlockKind = "ask"
)

// ResultBlock is one grounded result block (docs/contract.md section 6): {kind:"text", text,
// sources?}, {kind:"report", report} or {kind:"ask", ask}. Only the members
// of its Kind may be set. Nothing in a block is markup or code: hosts render
// its strings through their own safe components.
//
// A report or ask read by [ParseEnvelope] keeps its bytes, so that MarshalJSON
// re-emits members this version does not know while Report or Ask is left
// unchanged; once changed they are written from their fields.
type ResultBlock struct {
	Kind    ResultBlockKind
	Text    string
	Sources []Source
	Report  *blocks.ReportBlock
	Ask     *blocks.AskBlock
	Unknown []Member

	kept []byte // the report's or ask's JSON as read
}

// Source grounds a text block: Ref is an opaque, non-empty reference the
// host resolves after its own authorization check; Label is optional.
type Source struct {
	Ref     string
	Label   string
	Unknown []Member
}

// ProvenanceEvent says which provider produced the turn (docs/contract.md section 6, channel
// EVENT). Provider is required and non-empty; Model and RequestID are
// optional ("" when absent).
type ProvenanceEvent struct {
	Provider  string
	Model     string
	RequestID string
	Unknown   []Member
}

// ErrorEvent is the error event (docs/contract.md section 6, channel EVENT),
// the one Go type of it: Code is non-empty and machine-readable; Message is
// for people. Retryable must be present on the wire: an error without an
// explicit retryable is refused. RetryAfterMs is an optional non-negative
// delay in milliseconds. A [ChatStateV1] keeps a turn's last one as an
// [ErrorState]; package turn's Failure is the Go error a producer ends a
// turn failed with, which becomes one.
type ErrorEvent struct {
	Code         ErrorCode
	Message      string
	Retryable    bool
	RetryAfterMs *int64
	Unknown      []Member
}

// ErrorCode is an [ErrorEvent]'s code (docs/contract.md section 6.1): an
// open set of machine-readable names, never empty on the wire. A failed
// turn's code is its refusal's ([refusal.Code], section 16.5) or internal,
// a provider's failure one of package ingest's provider-… codes (section
// 17.5), an upgraded version-0 error legacy-error (section 9.3), and a
// host may choose its own. A reader takes any non-empty code: branch on
// the codes you know, and treat another as a failure of unknown cause.
type ErrorCode string

// CardEvent opens or replaces an interactive card (docs/contract.md section 6, channel
// STATE): the same shape as version 0's card event. Like a [ResultBlock]'s
// report, a card read by [ParseEnvelope] keeps its bytes for re-emission while
// Card is unchanged.
type CardEvent struct {
	Card    cards.OpenCardSnapshot
	Unknown []Member

	kept []byte
}

// CardClosedEvent closes the card of CorrelationID (non-empty), with an
// optional free-text Outcome (docs/contract.md section 6, channel STATE).
type CardClosedEvent struct {
	CorrelationID string
	Outcome       string
	Unknown       []Member
}

// StateEvent carries the host's state snapshot (docs/contract.md section 6, channel STATE):
// Version is a non-negative integer, Snapshot any JSON value (required).
type StateEvent struct {
	Version  int64
	Snapshot json.RawMessage
	Unknown  []Member
}

// CapabilitiesEvent declares the host's capabilities (docs/contract.md sections 6 and 8,
// channel STATE).
type CapabilitiesEvent struct {
	Capabilities ChatCapabilities
	Unknown      []Member
}

// NavigateEvent asks the client to navigate to Href, a non-empty string
// (docs/contract.md section 6, channel TRANSIENT). Hosts check the target before following it.
type NavigateEvent struct {
	Href    string
	Unknown []Member
}

// AppEvent is an event of a product type the host registered (docs/contract.md section 6):
// Type is its "type" and Raw the whole event object as read, "type"
// included. Its channel is the one its Registry gives.
type AppEvent struct {
	Type string
	Raw  json.RawMessage
}

// EventType returns "session".
func (*SessionEvent) EventType() string { return EventTypeSession }

// EventType returns "lifecycle".
func (*LifecycleEvent) EventType() string { return EventTypeLifecycle }

// EventType returns "delta".
func (*DeltaEvent) EventType() string { return EventTypeDelta }

// EventType returns "tool_call".
func (*ToolCallEvent) EventType() string { return EventTypeToolCall }

// EventType returns "tool_result".
func (*ToolResultEvent) EventType() string { return EventTypeToolResult }

// EventType returns "result".
func (*ResultEvent) EventType() string { return EventTypeResult }

// EventType returns "provenance".
func (*ProvenanceEvent) EventType() string { return EventTypeProvenance }

// EventType returns "error".
func (*ErrorEvent) EventType() string { return EventTypeError }

// EventType returns "step".
func (*StepEvent) EventType() string { return EventTypeStep }

// EventType returns "card".
func (*CardEvent) EventType() string { return EventTypeCard }

// EventType returns "card_closed".
func (*CardClosedEvent) EventType() string { return EventTypeCardClosed }

// EventType returns "state".
func (*StateEvent) EventType() string { return EventTypeState }

// EventType returns "capabilities".
func (*CapabilitiesEvent) EventType() string { return EventTypeCapabilities }

// EventType returns "navigate".
func (*NavigateEvent) EventType() string { return EventTypeNavigate }

// EventType returns the product type.
func (e *AppEvent) EventType() string { return e.Type }

func (*SessionEvent) isEvent()      {}
func (*LifecycleEvent) isEvent()    {}
func (*DeltaEvent) isEvent()        {}
func (*ToolCallEvent) isEvent()     {}
func (*ToolResultEvent) isEvent()   {}
func (*ResultEvent) isEvent()       {}
func (*ProvenanceEvent) isEvent()   {}
func (*ErrorEvent) isEvent()        {}
func (*StepEvent) isEvent()         {}
func (*CardEvent) isEvent()         {}
func (*CardClosedEvent) isEvent()   {}
func (*StateEvent) isEvent()        {}
func (*CapabilitiesEvent) isEvent() {}
func (*NavigateEvent) isEvent()     {}
func (*AppEvent) isEvent()          {}

// keptCard returns the card's JSON as read (see cardKeeper).
func (e *CardEvent) keptCard() *[]byte { return &e.kept }

// validateBlocks checks the blocks member of the event at path.
func validateBlocks(bs []ResultBlock, path string) error {
	for i := range bs {
		if err := bs[i].validate(); err != nil {
			return prefixed(err, path+"/blocks/"+itoa(i))
		}
	}
	return nil
}

// prefixed puts path in front of the path of a refusal.
func prefixed(err error, path string) error {
	if e, ok := err.(*refusal.Error); ok {
		e.Path = path + e.Path
	}
	return err
}

// validate checks a block; paths in refusals are relative to the block.
func (b *ResultBlock) validate() error {
	const path = ""
	switch b.Kind {
	case ResultBlockText:
		if b.Report != nil || b.Ask != nil {
			return refusef(refusal.CodeInvalidEvent, path, "a text block carries only text and sources")
		}
		for i := range b.Sources {
			if b.Sources[i].Ref == "" {
				return refusef(refusal.CodeInvalidEvent, path+"/sources/"+itoa(i)+"/ref", "must be a non-empty string")
			}
		}
		return nil
	case ResultBlockReport:
		if b.Text != "" || b.Sources != nil || b.Ask != nil {
			return refusef(refusal.CodeInvalidEvent, path, "a report block carries only its report")
		}
		if b.Report == nil {
			return refusef(refusal.CodeInvalidEvent, path+"/report", "missing")
		}
		return prefixed(validateReport(b.Report), "/report")
	case ResultBlockAsk:
		if b.Text != "" || b.Sources != nil || b.Report != nil {
			return refusef(refusal.CodeInvalidEvent, path, "an ask block carries only its ask")
		}
		if b.Ask == nil {
			return refusef(refusal.CodeInvalidEvent, path+"/ask", "missing")
		}
		return validateAsk(b.Ask, path+"/ask")
	}
	return refusef(refusal.CodeInvalidEvent, path+"/kind", "unknown result block kind %q", b.Kind)
}

// validateReport enforces what a ReportBlock's parser guarantees (section
// 4): at least one plan, every plan titled, every item with text. The rules
// are ReportBlock's validate tags, shared with the card validators; a
// violation is refused as invalid-event at its path relative to the report.
func validateReport(r *blocks.ReportBlock) error {
	if err := firstViolation(violations(structViolations(*r)), refusal.CodeInvalidEvent); err != nil {
		return err
	}
	return checkKeptStrings(r, refusal.CodeInvalidEvent)
}

// validateAsk enforces what an AskBlock's parser guarantees (docs/contract.md section 4): a
// question, and an id and a label on every option.
func validateAsk(a *blocks.AskBlock, path string) error {
	if a.Question == "" {
		return refusef(refusal.CodeInvalidEvent, path+"/question", "must be a non-empty string")
	}
	for i, o := range a.Options {
		if o.ID == "" || o.Label == "" {
			return refusef(refusal.CodeInvalidEvent, path+"/options/"+itoa(i), "an option has a non-empty id and label")
		}
	}
	return prefixed(checkKeptStrings(a, refusal.CodeInvalidEvent), path)
}

// validateCardSnapshot checks an open card with ValidateOpenCardSnapshot
// (docs/contract.md section 3) and refuses with the first violation, its path relative to
// the card; every violation is in the refusal's cause.
func validateCardSnapshot(c *cards.OpenCardSnapshot) error {
	if err := firstViolation(ValidateOpenCardSnapshot(*c), refusal.CodeInvalidCard); err != nil {
		return err
	}
	return checkKeptStrings(c, refusal.CodeInvalidCard)
}

// firstViolation turns the CardViolations of a validator into one refusal
// of code: the first violation's path and message, wrapping them all.
func firstViolation(err error, code refusal.Code) error {
	vs, ok := err.(CardViolations)
	if !ok || len(vs) == 0 {
		return err
	}
	return refuseWrap(code, vs[0].Path, vs[0].Message, vs)
}
