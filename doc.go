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
// # Refusals
//
// Every refusal is an *Error with a stable Code (contract-v1.md section 12).
// Branch with errors.Is against a sentinel such as ErrSequenceGap, with
// errors.AsType[*Error], or with CodeOf; message text is for people only.
package chatprotocol
