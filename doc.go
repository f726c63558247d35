// Package chatprotocol is version 1 of the wire contract for streaming
// agent chats: the [ChatEventEnvelope] and the [ChatStateV1] it reduces to,
// interactive cards and their answers, version negotiation and capability
// declarations. Its rules are those of docs/contract.md; each identifier's
// documentation cites the section its rule comes from.
//
// Parsing validates the contract; the host's store owns authorization,
// cursor ordering, retention and atomic mutations. No function of this
// package starts a turn, allocates an identity, dispatches a tool or grants
// access.
//
// Related packages: legacy holds version 0, the unversioned frame union,
// and its adapters to and from version 1; blocks reads the <report> and
// <ask> blocks models embed in turn text; sse frames events on the wire;
// replay and stream keep and serve a turn's envelopes; recovery and
// interactions are the reliability components that wrap a host's store.
//
// # Cards
//
// Cards are validated with [ValidateCardSpec], [ValidateOpenCardSnapshot],
// [ValidateCardResponse] and [ValidateCardAnswer], which report every
// violation with its JSON pointer ([CardViolations]). [ParseCardResponse]
// reads a person's answer from a request body as strictly as
// [ParseEnvelope] reads a frame.
//
// # Refusals
//
// Every refusal is a [*refusal.Error] with a stable [refusal.Code]
// (docs/contract.md section 12). Branch with [errors.Is] against a
// sentinel of package refusal such as [refusal.ErrSequenceGap], with
// errors.AsType[*refusal.Error], or with [refusal.CodeOf]; message text is
// for people only.
//
// # Version 1
//
// [ParseEnvelope] (or an [EnvelopeParser], for other limits and a host's
// product types) reads one frame into a [ChatEventEnvelope] whose [Event] is
// one of the types of docs/contract.md section 6;
// [ChatEventEnvelope.MarshalJSON] (or [ChatEventEnvelope.AppendJSON])
// writes the canonical one-line form back, with every member the reader did
// not know. A [ChatStateV1] folds envelopes with [ChatStateV1.Apply]
// (section 7), [ChatStateV1.Clone] copies it, and [ChatStateV1.WriteJSON]
// streams its JSON form, which is written and never read back (section
// 7.5). [NegotiateChatVersion] and [RequireChatCapabilities] answer
// sections 1 and 8. The language-neutral cases in testdata/ (schemas,
// fixtures, goldens, manifest) pin all of it.
//
// # Security considerations
//
// Frames come from other processes and, through them, from models; the
// version-1 reader assumes nothing about them.
//
//   - One meaning per frame (docs/contract.md section 5.3). [ParseEnvelope]
//     refuses duplicated names and invalid UTF-8 at every depth, and a name
//     that differs only by case from a member of the contract, at every
//     level, or, inside cards and blocks, from another name of the same
//     object. [ParseCardResponse] applies the same rules to a person's
//     answer, and refuses case collisions inside its value too. Unknown
//     members are kept and re-emitted (section 5.4).
//   - Bounded work. A frame over [DefaultMaxFrameBytes] is refused before it
//     is read, and nesting beyond [DefaultMaxDepth] is refused; parsing is
//     linear in the frame's size. Integers are read exactly: no seq is
//     rounded into another.
//   - No invented identity, no guessed version. Ids must be sent by the host;
//     an unversioned or future frame is unsupported-version, never read as
//     version 1; an unknown tool result status is refused, never mapped.
//   - Replays cannot rewrite history. [ChatStateV1.Apply] accepts a seq at or
//     below the last only as the identical envelope again (a no-op), and
//     refuses a frame of another conversation and anything after a turn
//     ended except the late result of a call that was in flight.
//   - Nothing executes. Result blocks, sources, cards and navigate targets
//     are data: sources are opaque references the host resolves after its
//     own authorization check. Parsing grants no access and dispatches
//     nothing.
package chatprotocol
