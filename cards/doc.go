// Package cards holds the card shapes of the chat contract (docs/contract.md
// section 3): what a model asks a person ([CardSpec], presented by a
// [CardPresentation]), a card while it waits for its answer
// ([OpenCardSnapshot]) and the answer ([CardResponse]).
//
// These are the types the root package's card events and validators and the
// interactions resolver share. The package only carries them: the rules
// live in the root package (ValidateCardSpec and its
// siblings), which interactions.Resolver applies when it opens a card. The
// validate tags are read there; this package imports no validator, so that
// interactions imports none either.
package cards
