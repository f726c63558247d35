package legacy

import (
	"encoding/json"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
)

// Card is an open card exactly as a version-0 card frame carries it: the
// TypeScript reference's OpenCardSnapshot (a CardSpec plus correlationId,
// createdAt and dataSchemaJson; docs/contract.md section 3). Each optional
// member is nil when the frame does not have it, so that a member present
// as false, 0 or "" is written back as it was read. Numbers are JSON
// numbers (float64), as the reference types them: createdAt is epoch
// milliseconds and timeoutMs milliseconds, whole or not; the card rules
// and the upgrade to version 1 (which needs integers) judge them, not the
// reader. DataSchemaJSON is the JSON text of the dataSchemaJson object,
// nil when absent.
//
// The card rules are version 1's: ToOpenCardSnapshot gives the card
// [chatprotocol.ValidateOpenCardSnapshot] checks.
type Card struct {
	CorrelationID  string
	CreatedAt      float64
	Prompt         string
	Presentation   *CardPresentation
	FallbackText   *string
	AllowDecline   *bool
	TimeoutMs      *float64
	Report         *Report
	DataSchemaJSON json.RawMessage
	Unknown        []chatprotocol.Member
}

// CardPresentation is a card's presentation as the reference types it
// (docs/contract.md section 3): Kind is one of the six kinds; each optional
// member is nil when absent. Options is nil when absent and empty, not nil,
// when the frame has "options":[].
type CardPresentation struct {
	Kind            string
	Options         []CardOption
	Placeholder     *string
	Multiline       *bool
	Min             *CardBound
	Max             *CardBound
	Step            *float64
	VoiceAnswerable *bool
	Unknown         []chatprotocol.Member
}

// CardOption is one option as the reference types it: id and label
// required (any string, "" included), the others nil when absent; Style is
// "default", "primary" or "danger" when present.
type CardOption struct {
	ID          string
	Label       string
	Description *string
	Hint        *string
	Style       *string
	Unknown     []chatprotocol.Member
}

// CardBound is the min or max of a card presentation, the reference's
// number | string: a JSON number when IsString is false, else the string
// String ("" included; whether it is an ISO date is a card rule).
type CardBound struct {
	Number   float64
	String   string
	IsString bool
}

// Report is a card's report as the reference's ReportBlock types it:
// plans required (empty included), the title nil when absent. Unlike
// [blocks.ParseReportBlock], which reads a <report> tolerantly (trims,
// falls back, drops), a card frame's report is read exactly; the card
// rules judge it (docs/contract.md section 3.2).
type Report struct {
	Title   *string
	Plans   []ReportPlan
	Unknown []chatprotocol.Member
}

// ReportPlan is one plan of a Report: title required, the others nil when
// absent; Items is nil when absent and empty when the frame has [].
type ReportPlan struct {
	Slug    *string
	Title   string
	Status  *string
	Summary *string
	Items   []ReportItem
	Unknown []chatprotocol.Member
}

// ReportItem is one item of a [ReportPlan]: text required, the others nil
// when absent.
type ReportItem struct {
	ID      *string
	Text    string
	Status  *string
	Ref     *string
	Unknown []chatprotocol.Member
}

// The presentation kinds and option styles the reference's types accept
// (CardPresentationKind, CardOption.style).
var (
	cardKinds    = []string{"radio", "checkbox", "text", "date", "slider", "select"}
	optionStyles = []string{"default", "primary", "danger"}
)
