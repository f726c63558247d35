package cards

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/Papercusp/chat-protocol-go/blocks"
)

// CardKind is the presentation of an interactive card (docs/contract.md
// section 3).
type CardKind string

// The card kinds of the contract.
const (
	CardKindRadio    CardKind = "radio"
	CardKindCheckbox CardKind = "checkbox"
	CardKindText     CardKind = "text"
	CardKindDate     CardKind = "date"
	CardKindSlider   CardKind = "slider"
	CardKindSelect   CardKind = "select"
)

// CardOptionStyle is the visual weight of a card option.
type CardOptionStyle string

// The option styles of the contract; "" means default.
const (
	CardOptionStyleDefault CardOptionStyle = "default"
	CardOptionStylePrimary CardOptionStyle = "primary"
	CardOptionStyleDanger  CardOptionStyle = "danger"
)

// CardAction is what a person did with a card.
type CardAction string

// The card response actions of the contract.
const (
	CardActionSubmit  CardAction = "submit"
	CardActionDecline CardAction = "decline"
	CardActionCancel  CardAction = "cancel"
)

// CardSpec is what a model asks a person: the prompt and how to present it
// (docs/contract.md section 3). A card without Presentation is a confirm card.
// TimeoutMs is in milliseconds; 0 means no timeout.
type CardSpec struct {
	Prompt       string              `json:"prompt" validate:"required"`
	Presentation *CardPresentation   `json:"presentation,omitempty"`
	AllowDecline bool                `json:"allowDecline,omitzero"`
	TimeoutMs    int64               `json:"timeoutMs,omitzero"`
	FallbackText string              `json:"fallbackText,omitzero"`
	Report       *blocks.ReportBlock `json:"report,omitempty"`
}

// CardPresentation says how a card is rendered and what shape its answer
// takes (docs/contract.md section 3): radio and select answer {optionId},
// checkbox {optionIds}, text {text}, slider {value}, date {date}.
// Min and Max bound a slider (numbers) or a date card (ISO dates).
type CardPresentation struct {
	Kind            CardKind     `json:"kind" validate:"required,oneof=radio checkbox text date slider select"`
	Options         []CardOption `json:"options,omitempty" validate:"dive"`
	Placeholder     string       `json:"placeholder,omitzero"`
	Multiline       bool         `json:"multiline,omitzero"`
	Min             *CardBound   `json:"min,omitempty"`
	Max             *CardBound   `json:"max,omitempty"`
	Step            float64      `json:"step,omitzero" validate:"gte=0"`
	VoiceAnswerable bool         `json:"voiceAnswerable,omitzero"`
}

// CardOption is one choice of a radio, checkbox or select card.
type CardOption struct {
	ID          string          `json:"id" validate:"required"`
	Label       string          `json:"label" validate:"required"`
	Description string          `json:"description,omitzero"`
	Hint        string          `json:"hint,omitzero"`
	Style       CardOptionStyle `json:"style,omitzero" validate:"omitempty,oneof=default primary danger"`
}

// OpenCardSnapshot is a card as the STATE channel carries it while it waits
// for an answer: the [CardSpec] plus its correlation id, its creation time in
// epoch milliseconds and, optionally, the JSON Schema of its answer as a
// JSON string (docs/contract.md section 3).
//
// The validate tags on this file's types are read by the root package's
// card validators (go-playground/validator); this package does not import
// the validator. The rules interactions/ applies as well are not tags but
// functions (card_rules.go), so that both packages share them.
type OpenCardSnapshot struct {
	CorrelationID string `json:"correlationId" validate:"required"`
	CreatedAt     int64  `json:"createdAt" validate:"gt=0"`
	CardSpec
	DataSchemaJSON string `json:"dataSchemaJson,omitzero"`
}

// CardResponse is a person's answer to a card: submit with a Value object,
// decline, or cancel (docs/contract.md section 3). Value is the raw JSON
// object of a submit and nil otherwise.
type CardResponse struct {
	Action        CardAction      `json:"action"`
	CorrelationID string          `json:"correlationId"`
	Value         json.RawMessage `json:"value,omitempty"`
}

// CardBound is the min or max of a card: a JSON number, or an ISO 8601 date
// string. When Date is non-empty the bound is a date and Number is 0.
type CardBound struct {
	Number float64
	Date   string
}

// IsDate reports whether the bound is a date string.
func (b CardBound) IsDate() bool { return b.Date != "" }

// MarshalJSON writes the bound as a JSON number, or as a JSON string when it
// is a date.
func (b CardBound) MarshalJSON() ([]byte, error) {
	if b.IsDate() {
		return json.Marshal(b.Date)
	}
	return json.Marshal(b.Number)
}

// UnmarshalJSON reads a JSON number or a non-empty JSON string; anything else
// is an error.
func (b *CardBound) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		if s == "" {
			return fmt.Errorf("card bound: empty date string")
		}
		*b = CardBound{Date: s}
		return nil
	}
	var f float64
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("card bound: want a number or a date string: %w", err)
	}
	*b = CardBound{Number: f}
	return nil
}
