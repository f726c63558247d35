// Package cards holds the card shapes of the chat contract (docs/contract.md
// section 3): what a model asks a person ([CardSpec], presented by a
// [CardPresentation]), a card while it waits for its answer
// ([OpenCardSnapshot]) and the answer ([CardResponse]).
//
// These are the types the root package's card events and validators and
// the interactions resolver share. The package only carries them: the rules
// live in the root package's validators, which the interactions resolver
// applies when it opens a card, and which read the validate tags. The
// package imports no validator.
package cards
