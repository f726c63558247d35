// Package sse writes and reads server-sent event streams
// (text/event-stream), the framing of the chat wire contract
// (docs/contract.md section 10). It is framing only: it knows nothing of
// chat events or envelopes, and imports only the standard library and the
// module's refusal package. Use it to serve a stream from an HTTP handler,
// to read one from any [io.Reader], or to check a stream's bytes; use the
// root package to turn frames into events and envelopes.
//
// # Writing
//
// [AppendFrame], [AppendComment] and [AppendHeartbeat] give the bytes of
// one [Frame]; an [Encoder] writes them to an [io.Writer]; a [Writer]
// serves them as an HTTP response, flushing every frame and optionally
// sending heartbeats. A frame is its event, data, retry and id lines in
// that order, LF line ends and a blank line (section 10.1):
//
//	data: {"schemaVersion":1,...}
//	id: 1
//
// For a version-1 envelope the id is the decimal seq and there is no event
// line. A heartbeat is "event: heartbeat" with data {"tsMs":N} and no id; a
// comment is ": text" (section 10.2).
//
// # Reading
//
// A [Decoder] applies the event-stream rules of the WHATWG HTML standard
// (section 10.3) to any [io.Reader], read in chunks of any size. It returns
// each [Event], comment-only frames included, with its type, data, last
// event id, frame number and byte offset; [Decoder.Retry] gives the
// reconnection delay. [IsEventStream] checks a response's Content-Type as
// EventSource does.
//
// # Security considerations
//
// [AppendFrame], and so [Encoder] and [Writer], refuse with
// [refusal.ErrInvalidFrame] an id or event name holding CR or LF, which
// would inject fields, and an id holding NUL (section 10.1). A [Decoder]
// bounds every frame, and so every line, by
// [DecoderOptions.MaxFrameBytes] (1 MiB by default) and refuses a larger one
// with [refusal.ErrFrameTooLarge] as soon as it goes past the bound (section
// 10.4); its memory stays within a small multiple of the bound. It neither
// checks nor repairs UTF-8 and passes NUL bytes in data through, as
// browsers do: the consumer of the data refuses such input.
package sse
