// Package chatprotocol is the wire contract for streaming agent chats: the
// version-0 ChatEvent union, the version-1 ChatEventEnvelope and the
// ChatStateV1 it reduces to, interactive cards and their answers, version
// negotiation and capability declarations. Its rules are those of
// contract-v1.md (design/contract-v1.md beside this module's repository) and
// of the seed it makes concrete; each identifier's documentation cites the
// section its rule comes from.
//
// Parsing validates the contract; the host's store owns authorization,
// cursor ordering, retention and atomic mutations. No function of this
// package starts a turn, allocates an identity, dispatches a tool or grants
// access.
//
// Related packages: blocks reads the <report> and <ask> blocks models embed
// in turn text; legacy adapts unversioned frames; sse frames events on the
// wire; recovery and interactions are the reliability components that wrap a
// host's store.
//
// # Version 0
//
// ParseChatEvent reads unversioned frames tolerantly, as the TypeScript
// reference does: never an error, never a panic; nil for anything but a JSON
// object with a string type; a product's own types, and union frames whose
// members do not fit, come back whole as a *ChatAppEvent. Bytes are read as
// a browser reads them (invalid UTF-8 as U+FFFD, duplicate names
// last-one-wins, names case-sensitive, 1e400 as Infinity). This leniency is
// deliberate and confined to version 0: version-1 envelopes are parsed
// strictly. ChatEventChannel, IsStateChannelEvent and IsReplayable give the
// section-2 channel partition; only EVENT-channel frames are replayable.
//
// Cards are validated with ValidateCardSpec, ValidateOpenCardSnapshot,
// ValidateCardResponse and ValidateCardAnswer, which report every
// violation with its JSON pointer (CardViolations).
//
// # Refusals
//
// Every refusal is an *Error with a stable Code (contract-v1.md section 12).
// Branch with errors.Is against a sentinel such as ErrSequenceGap, with
// errors.AsType[*Error], or with CodeOf; message text is for people only.
package chatprotocol
