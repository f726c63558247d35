// Package legacy is version 0 of the chat wire contract: the unversioned
// (legacy0) frame union and the explicit adapters between it and version-1
// envelopes. It is the only code of the module that reads or writes
// unversioned frames, and it does so for version 1 only when a host selects
// it: nothing guesses an unversioned frame into version 1.
//
// # The union
//
// Frame is the sealed union of docs/contract.md section 2: [*SessionFrame],
// [*TokenFrame], [*ToolStartFrame], [*CardFrame], [*CardClosedFrame], [*StateFrame],
// [*DoneFrame], [*ErrorFrame] and [*NavigateFrame], the Papercusp dialect's
// [*DeltaFrame], [*ToolCallFrame] and [*ToolResultFrame], and [*AppFrame] for a
// product's own type. Type names are the Type* constants.
//
// [ParseChatEvent] reads a frame tolerantly, as the TypeScript reference
// does: never an error, never a panic; nil for anything but a JSON object
// with a string type; a product's own types, and union frames their
// reference type does not accept, come back whole as an [*AppFrame].
// [MarshalChatEvent] writes any Frame, and writes a frame [ParseChatEvent] read
// back as the same JSON (docs/contract.md section 2.4): the frames are the
// reference's types exactly, optional members nil when absent (Card and
// its parts for a card frame). [FrameChannel], [IsStateFrame] and [IsReplayableFrame] give the section-2
// channel partition: only EVENT-channel frames are replayable.
//
// # Adapters
//
// The adapters of docs/contract.md section 9:
//
//   - [DecodeLegacyChatFrame] reads one frame of a dialect the host names
//     into a typed Frame, refusing what cannot be upgraded faithfully.
//   - [UpgradeLegacyChatFrame] maps a Frame to one or more envelopes, with
//     the identity, tool call ids and product types a Host supplies;
//     [AppendUpgradedLegacyChatFrame] appends them to a slice the caller
//     reuses. [StreamHost] is a ready-made Host for one stream.
//   - [EncodeLegacyChatFrame] maps an envelope back to a Frame where a legacy
//     form exists, and refuses with unsupported-event where none does, so
//     the host chooses its fallback.
//
// # Dialects
//
// The host says which vocabulary a stream speaks (Dialect); the bytes are
// never sniffed.
//
// Scout is the shipped version-0 union, as [ParseChatEvent] reads it:
// session{sessionId}, token{content}, tool_start{tool, callId?},
// card{card}, card_closed{correlationId}, state{version, snapshot?},
// done{usage?}, error{message}, navigate{href}. Upgrading renames
// token/content to delta/text and tool_start/tool to tool_call/name.
//
// Papercusp keeps its existing vocabulary, which the contract does not
// spell out. This package assumes, and its fixtures
// (testdata/legacy/papercusp) pin, that the existing Papercusp vocabulary is
// the one version 1 adopted, without the envelope: delta{text} and
// tool_call{callId?, name, input?} where Scout has token and tool_start,
// plus tool_result{callId?, status, output?}, the only legacy tool result
// (an unknown result status must be refusable); every other type is the
// same as Scout's (session, card, card_closed, state, done{usage?},
// error{message}, navigate). Such frames upgrade without any renaming. In
// the Papercusp dialect token and tool_start are not vocabulary, and in the
// Scout dialect delta, tool_call and tool_result are not: each is read as a
// product type, which no registry can list, so it is refused on upgrade
// with unsupported-event. Should Papercusp's actual wire names differ, the
// vocabulary is one table in decode.go.
//
// # Nothing is invented
//
// The adapters never make up an id, a status or a member:
//
//   - conversation, turn, event id and seq come from [Host.Identify];
//   - a tool frame without a call id takes [Host.ToolCallID]'s stable
//     mapping, or is refused with missing-call-id;
//   - a tool result whose status is absent or unknown is refused with
//     unknown-result-status;
//   - a product type the host's [chatprotocol.Registry] does not list is
//     refused with unsupported-event;
//   - error, which ends a legacy turn, becomes an error event with code
//     "legacy-error" ([ErrorCode]) and retryable false, followed by
//     lifecycle failed: the two facts the legacy frame states.
//
// Encoding is lossy only where the legacy form has no place for a member
// (see [EncodeLegacyChatFrame]); it refuses rather than drops whole events.
//
// # Refusals
//
// Every refusal is a [*refusal.Error] with a stable code of package refusal
// (docs/contract.md section 12) and, where one applies, a JSON
// pointer into the legacy frame (decode, upgrade) or the envelope
// (encode). Branch with [errors.Is] against [refusal.ErrMissingCallID]
// and the other sentinels, or with [refusal.CodeOf]. The package adds
// no code of its own.
//
// A Host may keep its mappings in a store. When the host itself fails (its
// ToolCallID or Identify returns an error that is not a refusal: a store
// that is down, a cancelled context), the upgrade returns a [*HostError]
// wrapping that error, with no contract code: the frame was not refused
// and may be upgraded again. Only a missing mapping (ok false, no error) is
// missing-call-id.
//
// # Security considerations
//
// Legacy frames are read as a browser's JSON.parse reads them (duplicate
// names last-one-wins, invalid UTF-8 as U+FFFD), because that is what
// their producers were tested against. The envelopes they upgrade to are
// then held to the version-1 rules: a string that is not valid UTF-8
// (JSON.parse admits lone surrogates such as "\ud800"), or a product or
// snapshot member with duplicate names, is refused on upgrade rather than
// passed to a strict version-1 consumer, which might read it differently.
// Decoding has no size limit: bound frames before (sse.Decoder does).
package legacy
