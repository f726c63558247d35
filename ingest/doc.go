// Package ingest reads a model provider's stream and drives the producer of
// one chat turn with it (docs/contract.md section 17): the OpenAI Chat
// Completions stream, the OpenAI Responses stream and the Anthropic Messages
// stream, as the provider sends them (raw SSE), with no SDK.
//
// Read takes a body and a Sink, the turn's producer, and calls it with the
// turn's provenance, its text deltas, its tool calls, its usage and one end:
//
//	err := ingest.Read(ctx, ingest.AnthropicMessages, resp.Body, ingest.ProducerSink(producer), &ingest.Options{Observer: obs})
//
// A Mapper does the same one provider event at a time, for a caller that
// has the events already decoded (the SDK bindings, in the nested modules
// ingest/openaisdk and ingest/anthropicsdk, hand it each event's raw JSON
// with [MapEvents] and end the turn with [Mapper.EndWith]).
//
// What a reader guarantees, for every kind:
//
//   - Text deltas are the provider's text exactly (no Unicode
//     normalization); reasoning, reasoning summaries and thinking never
//     reach the text, only [Options.Reasoning].
//   - Each provider tool call becomes one AnnounceToolCall, once,
//     complete: the provider's call id, the first non-empty name, and the
//     parsed JSON of its argument fragments grouped by the provider's key. Running it is
//     the host's, and the effect identity recovery fences is the host's,
//     never this provider id, which changes on every retry.
//   - A tool call the provider's output token limit cut (Chat finish
//     reason length, Responses incomplete, Anthropic max_tokens) is never
//     announced: the turn completes with the provider's stop reason and
//     its usage, and the host decides what to do.
//   - Usage is given once, before the end, from the provider's final count,
//     and not at all when the provider sent none.
//   - The turn ends exactly once: Complete at the provider's normal end,
//     Fail for a provider error, a content filter, a refusal or a cut
//     stream, retryable only by the rule of Retryable.
//
// Provider JSON is not contract JSON: unknown members, duplicated names and
// invalid UTF-8 are read, never refused (invalid UTF-8 becomes U+FFFD).
// Reading allocates, per delta, the delta's text and nothing else.
package ingest
