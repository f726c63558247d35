package chatprotocol

import "github.com/Papercusp/chat-protocol-go/internal/wire"

// The card shapes of contract-v1.md section 3. They are defined once, in a
// leaf package, so that interactions/ can share them without importing the
// validator this package uses; these aliases are the names to use.
type (
	// CardSpec is what a model asks a person; see wire.CardSpec.
	CardSpec = wire.CardSpec
	// CardPresentation says how a card is rendered and what its answer is.
	CardPresentation = wire.CardPresentation
	// CardOption is one choice of a radio, checkbox or select card.
	CardOption = wire.CardOption
	// OpenCardSnapshot is an open card as the STATE channel carries it.
	OpenCardSnapshot = wire.OpenCardSnapshot
	// CardResponse is a person's submit, decline or cancel.
	CardResponse = wire.CardResponse
	// CardBound is a min or max: a number or an ISO date string.
	CardBound = wire.CardBound
	// CardKind is radio, checkbox, text, date, slider or select.
	CardKind = wire.CardKind
	// CardOptionStyle is default, primary or danger.
	CardOptionStyle = wire.CardOptionStyle
	// CardAction is submit, decline or cancel.
	CardAction = wire.CardAction
)

// The card kinds, option styles and response actions of section 3.
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
