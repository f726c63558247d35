// Package sse writes and reads server-sent event streams
// (text/event-stream), the framing of the chat wire contract
// (docs/contract.md section 10). It is framing only: it knows nothing of chat
// events or envelopes, and imports only the standard library and the
// module's refusal type. Use it to serve a stream from an HTTP handler, to
// read one from any [io.Reader], or to check a stream's bytes; use the root
// package to turn frames into events and envelopes.
//
// # Writing
//
// [AppendFrame], [AppendComment] and [AppendHeartbeat] give the bytes of one
// frame; Encoder writes them to an [io.Writer]; Writer serves them as an HTTP
// response, flushing every frame and optionally sending heartbeats. The
// format is the Papercusp wire format, byte for byte:
//
//	id: 1
//	event: lifecycle
//	data: {"schemaVersion":1,...}
//
// fields in the order id, event, data, retry, each "name: value", LF line
// ends, one data line per line of the payload, no event line for the type
// "message", and a blank line after each frame. A heartbeat is
// "event: heartbeat" with data {"tsMs":N} and no id; a comment is
// ": text". For a version-1 envelope the id is the decimal seq and the
// event name the event type.
//
// # Reading
//
// Decoder implements the event-stream interpretation of the WHATWG HTML
// standard over any [io.Reader], reading in chunks of any size. It returns
// events and comment-only frames, with their type, data, last event id,
// frame number and byte offset; [Decoder.Retry] gives the reconnection delay.
// [IsEventStream] checks a response's Content-Type as EventSource does.
//
// # Security considerations
//
// A field value holding CR or LF would end its line and start another
// field: an id of "1\ndata: {...}" would forge an event. [AppendFrame], and so
// Encoder and Writer, refuse such an id or event name with [refusal.ErrInvalidFrame]
// instead of writing it; a NUL in an id is refused too, since readers
// ignore such an id and would silently keep the previous one. Data needs no
// such check: every line of it becomes its own data line.
//
// A reader that buffers until a blank line can be made to grow without
// bound by a stream that never sends one. Decoder bounds every frame, and
// so every line, by [DecoderOptions.MaxFrameBytes] (1 MiB by default) and
// refuses a larger one with [refusal.ErrFrameTooLarge] as soon as it goes past the
// bound, without reading it whole; its memory stays within a small multiple
// of the bound. The small caches it keeps (event type names) are bounded
// too.
//
// The decoder neither checks nor repairs UTF-8, and passes NUL bytes in data
// through, as browsers do: the consumer of the data (a JSON decoder) is
// where such input is refused.
package sse
