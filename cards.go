package chatprotocol

import "github.com/Papercusp/chat-protocol-go/internal/wire"

// The card shapes of docs/contract.md section 3. They are defined once, in a
// leaf package, so that interactions/ can share them without importing the
// validator this package uses; these aliases are the names to use. Since go
// doc does not show the fields of an alias, each comment lists them, with
// their JSON names; optional members are omitted from JSON when zero.
type (
	// CardSpec is what a model asks a person:
	//
	//	Prompt       string              // "prompt", required
	//	Presentation *CardPresentation   // "presentation"; nil: a confirm card
	//	AllowDecline bool                // "allowDecline"
	//	TimeoutMs    int64               // "timeoutMs", milliseconds; 0: no timeout
	//	FallbackText string              // "fallbackText"
	//	Report       *blocks.ReportBlock // "report"
	CardSpec = wire.CardSpec
	// CardPresentation says how a card is rendered and what its answer is:
	//
	//	Kind            CardKind     // "kind", required: CardKindRadio …
	//	Options         []CardOption // "options": radio, checkbox, select
	//	Placeholder     string       // "placeholder"
	//	Multiline       bool         // "multiline"
	//	Min, Max        *CardBound   // "min", "max": slider numbers or date strings
	//	Step            float64      // "step"
	//	VoiceAnswerable bool         // "voiceAnswerable"
	CardPresentation = wire.CardPresentation
	// CardOption is one choice of a radio, checkbox or select card:
	//
	//	ID          string          // "id", required
	//	Label       string          // "label", required
	//	Description string          // "description"
	//	Hint        string          // "hint"
	//	Style       CardOptionStyle // "style": default, primary or danger
	CardOption = wire.CardOption
	// OpenCardSnapshot is an open card as the STATE channel carries it,
	// a CardSpec (embedded) plus
	//
	//	CorrelationID  string // "correlationId", required
	//	CreatedAt      int64  // "createdAt", epoch milliseconds, positive
	//	DataSchemaJSON string // "dataSchemaJson": the answer's JSON Schema, as JSON text
	OpenCardSnapshot = wire.OpenCardSnapshot
	// CardResponse is a person's submit, decline or cancel:
	//
	//	Action        CardAction      // "action": CardActionSubmit …
	//	CorrelationID string          // "correlationId", required
	//	Value         json.RawMessage // "value": the JSON object of a submit, else nil
	CardResponse = wire.CardResponse
	// CardBound is a min or max: a JSON number (Number float64) or, when
	// Date string is non-empty, an ISO date string; IsDate tells which.
	CardBound = wire.CardBound
	// CardKind is radio, checkbox, text, date, slider or select.
	CardKind = wire.CardKind
	// CardOptionStyle is default, primary or danger.
	CardOptionStyle = wire.CardOptionStyle
	// CardAction is submit, decline or cancel.
	CardAction = wire.CardAction
)

// The card kinds, option styles and response actions of docs/contract.md
// section 3.
const (
	CardKindRadio    = wire.CardKindRadio
	CardKindCheckbox = wire.CardKindCheckbox
	CardKindText     = wire.CardKindText
	CardKindDate     = wire.CardKindDate
	CardKindSlider   = wire.CardKindSlider
	CardKindSelect   = wire.CardKindSelect

	CardOptionStyleDefault = wire.CardOptionStyleDefault
	CardOptionStylePrimary = wire.CardOptionStylePrimary
	CardOptionStyleDanger  = wire.CardOptionStyleDanger

	CardActionSubmit  = wire.CardActionSubmit
	CardActionDecline = wire.CardActionDecline
	CardActionCancel  = wire.CardActionCancel
)
