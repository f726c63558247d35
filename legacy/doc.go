// Package legacy is version 0 of the chat wire contract: the unversioned
// (legacy0) frame union and the explicit adapters between it and version-1
// envelopes. It is the only code of the module that reads or writes
// unversioned frames, and it does so for version 1 only when a host selects
// it: nothing guesses an unversioned frame into version 1.
//
// # The union
//
// [Frame] is the sealed union of docs/contract.md section 2:
// [*SessionFrame], [*TokenFrame], [*ToolStartFrame], [*CardFrame],
// [*CardClosedFrame], [*StateFrame], [*DoneFrame], [*ErrorFrame] and
// [*NavigateFrame], the Papercusp dialect's [*DeltaFrame], [*ToolCallFrame]
// and [*ToolResultFrame], and [*AppFrame] for a product's own type. Type
// names are the Type* constants ([TypeSession] …).
//
// [ParseChatEvent] reads a frame tolerantly, as the TypeScript reference
// does (section 2.4): never an error, never a panic; nil for anything but a
// JSON object with a string type; a product's own types, and union frames
// their reference type does not accept, come back whole as an [*AppFrame].
// [MarshalChatEvent] writes any Frame, and writes a frame [ParseChatEvent]
// read back as the same JSON: the frames are the reference's types
// exactly, optional members nil when absent ([Card] and its parts for a
// card frame). [FrameChannel], [IsStateFrame] and [IsReplayableFrame] give
// the channel partition of section 2.1: only EVENT-channel frames are
// replayable.
//
// # Adapters
//
// The adapters of docs/contract.md section 9:
//
//   - [DecodeLegacyChatFrame] reads one frame of a dialect the host names
//     into a typed Frame, refusing what cannot be upgraded faithfully.
//   - [UpgradeLegacyChatFrame] maps a Frame to one or more envelopes, with
//     the identity, tool call ids and product types a [Host] supplies;
//     [AppendUpgradedLegacyChatFrame] appends them to a slice the caller
//     reuses. [StreamHost] is a ready-made Host for one stream.
//   - [EncodeLegacyChatFrame] maps an envelope back to a Frame where a
//     legacy form exists, and refuses with unsupported-event where none
//     does, so the host chooses its fallback.
//
// # Dialects
//
// The host says which vocabulary a stream speaks ([Dialect]); the bytes are
// never sniffed (docs/contract.md section 9.1). [Scout] is the
// shipped version-0 union, as [ParseChatEvent] reads it; upgrading renames
// token{content} to delta{text} and tool_start{tool} to tool_call{name}.
// [Papercusp] is version 1's vocabulary without the envelope, as
// testdata/legacy/papercusp pins it: delta, tool_call and tool_result in
// place of token and tool_start, which upgrade without renaming. Each
// dialect reads the other's text and tool types as product types, refused
// on upgrade with unsupported-event.
//
// # Nothing is invented
//
// The adapters never make up an id, a status or a member (docs/contract.md
// section 9.4): conversation, turn, event id and seq come from
// [Host.Identify]; a tool frame without a call id takes [Host.ToolCallID]'s
// stable mapping or is refused with missing-call-id; a tool result whose
// status is absent or unknown is refused with unknown-result-status; a
// product type the host's [chatprotocol.Registry] does not list is refused
// with unsupported-event; error becomes an error event with code
// [CodeError] and retryable false, then lifecycle failed. Encoding drops
// only members the legacy form has no place for, and refuses rather than
// drops whole events.
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
// When the host itself fails (its ToolCallID or Identify returns an error
// that is not a refusal), the upgrade returns a [*HostError] wrapping it,
// with no contract code: the frame may be upgraded again.
//
// # Security considerations
//
// Legacy frames are read as a browser's JSON.parse reads them (duplicate
// names last-one-wins, invalid UTF-8 as U+FFFD); the envelopes they upgrade
// to are then held to the version-1 rules, so a lone surrogate or a
// duplicated name in a product frame or snapshot is refused on upgrade
// (docs/contract.md section 9.3). Decoding has no size limit: bound frames
// before, as package sse's decoder does.
package legacy
