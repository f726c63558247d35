package ingest

import (
	"context"
	"encoding/json"

	chatprotocol "github.com/Papercusp/chat-protocol-go"
	"github.com/Papercusp/chat-protocol-go/observe"
)

// Sink is what a reader drives: the producer of one turn's version-1 events
// (docs/contract.md section 17). A reader calls Provenance first, then Delta
// and AnnounceToolCall in stream order, then Usage at most once, then exactly one of
// Complete and Fail, and nothing after it. The producer allocates seqs and
// event ids and writes the lifecycle events; a reader never does.
//
// An error from any method stops the reader, which returns it unchanged
// without calling the Sink again.
type Sink interface {
	// Provenance names the model behind the turn: provider ("openai",
	// "anthropic", or [Options.Provider]), the model the provider says
	// answered, and the provider's response id ("chatcmpl-…", "resp_…",
	// "msg_…"), the last two "" when the stream did not say.
	Provenance(ctx context.Context, provider, model, responseID string) error
	// Delta appends text to the turn's text: the provider's text exactly,
	// never empty.
	Delta(ctx context.Context, text string) error
	// AnnounceToolCall announces one tool call the model asked for, once:
	// callID is the provider's call id, which the host sends the result
	// back with; input is compact JSON, nil when the provider sent no
	// arguments, and the Sink may keep it. Running the tool is the host's
	// ([turn.Producer.RunToolCall]).
	AnnounceToolCall(ctx context.Context, callID, name string, input json.RawMessage) error
	// Usage gives the provider's final token count for the turn, before the
	// terminal call; it is not called when the provider sent none.
	Usage(ctx context.Context, u chatprotocol.Usage) error
	// Complete ends the turn normally; reason is the provider's stop
	// reason ("stop", "end_turn", "max_output_tokens" …), "" for none, of
	// any length ([ProducerSink] cuts it to [turn.MaxEndTextBytes]).
	Complete(ctx context.Context, reason string) error
	// Fail ends the turn with an error event (code one of the Code…
	// constants) and lifecycle failed; retryable follows the rule of
	// Retryable.
	Fail(ctx context.Context, code chatprotocol.ErrorCode, message string, retryable bool) error
}

// ReasoningSink is a [Sink] that also takes the model's reasoning
// (docs/contract.md sections 6.5 and 17.1): a reader with
// [Options.StreamReasoning] set calls Reasoning, in stream order between
// Provenance and the terminal call, when its Sink is one. [ProducerSink]
// and [StepSink] are; a Sink of its own need not be.
type ReasoningSink interface {
	Sink
	// Reasoning appends a piece of the model's reasoning or thinking,
	// never empty; it is not the turn's text.
	Reasoning(ctx context.Context, text string) error
}

// SourceSink is a [Sink] that also takes the web pages the model's answer
// cites or consulted (docs/contract.md sections 6.5 and 17.1): a reader
// with [Options.StreamSources] set calls Source once per page of the
// response, when its Sink is one. [ProducerSink] and [StepSink] are.
type SourceSink interface {
	Sink
	// Source appends one page: an absolute http or https URL and its
	// title, "" when the provider gave none.
	Source(ctx context.Context, s chatprotocol.WebSource) error
}

// The error codes a reader fails a turn with (docs/contract.md section
// 17.5), codes of its [chatprotocol.ErrorEvent]. The first five are
// transient.
const (
	// CodeOverloaded: the provider is overloaded (Anthropic
	// overloaded_error, HTTP 503 or 529).
	CodeOverloaded chatprotocol.ErrorCode = "provider-overloaded"
	// CodeRateLimited: a rate limit (rate_limit_error,
	// rate_limit_exceeded, HTTP 429 without insufficient_quota).
	CodeRateLimited chatprotocol.ErrorCode = "provider-rate-limited"
	// CodeTimeout: the provider timed out (timeout_error, HTTP 408 or 504).
	CodeTimeout chatprotocol.ErrorCode = "provider-timeout"
	// CodeServerError: the provider's own failure (api_error,
	// server_error, HTTP 500 or 502).
	CodeServerError chatprotocol.ErrorCode = "provider-server-error"
	// CodeStreamCut: the stream ended, or its reading failed, before the
	// provider's normal end.
	CodeStreamCut chatprotocol.ErrorCode = "provider-stream-cut"
	// CodeError: any other provider error (invalid request, authentication,
	// quota …).
	CodeError chatprotocol.ErrorCode = "provider-error"
	// CodeContentFilter: the provider's content filter stopped the answer.
	CodeContentFilter chatprotocol.ErrorCode = "provider-content-filter"
	// CodeRefusal: the model refused; the message is the refusal's text
	// when the provider sent one.
	CodeRefusal chatprotocol.ErrorCode = "provider-refusal"
	// CodeInvalidToolCall: a tool call without an id or a name, or whose
	// arguments are not one JSON value.
	CodeInvalidToolCall chatprotocol.ErrorCode = "provider-invalid-tool-call"
	// CodeInvalidStream: a frame that is not the provider's JSON.
	CodeInvalidStream chatprotocol.ErrorCode = "provider-invalid-stream"
)

// Transient reports whether code is one of the transient errors: overloaded,
// rate limited, timeout, server error, or a cut stream.
func Transient(code chatprotocol.ErrorCode) bool {
	switch code {
	case CodeOverloaded, CodeRateLimited, CodeTimeout, CodeServerError, CodeStreamCut:
		return true
	}
	return false
}

// Retryable is the one retry rule of docs/contract.md section 17: a failed
// turn may be retried only for a transient error, and only while nothing
// reached the stream (no delta, no tool call), since a retried turn would
// repeat it.
func Retryable(code chatprotocol.ErrorCode, emitted bool) bool { return Transient(code) && !emitted }

// Options configures a reader. A nil *Options, and every zero field, means
// the default.
type Options struct {
	// Provider is the provider named in provenance and telemetry; ""
	// means "openai" for both OpenAI kinds and "anthropic" for
	// anthropic-messages. Set it when an OpenAI-compatible service
	// (Azure OpenAI, a local server) speaks the stream.
	Provider string
	// RequestModel is the model the host asked for, reported to the
	// Observer as the request model; the stream only says which answered.
	RequestModel string
	// Reasoning, when set, receives the reasoning the model streamed beside
	// its text (OpenAI reasoning and reasoning summaries, Anthropic
	// thinking), in stream order. An error stops the reader as a Sink's
	// does.
	Reasoning func(ctx context.Context, text string) error
	// StreamReasoning puts that reasoning on the stream too: the reader
	// calls the Sink's Reasoning when it is a [ReasoningSink], after the
	// Reasoning hook (docs/contract.md sections 6.5 and 17.1). The host's
	// readers must register the event ([chatprotocol.WithReasoning]).
	StreamReasoning bool
	// StreamSources puts the pages the answer cites or consulted on the
	// stream (Anthropic citations and web search results, Responses
	// url_citation annotations): the reader calls the Sink's Source when
	// it is a [SourceSink], once per URL of the response. The host's
	// readers must register the event ([chatprotocol.WithSources]).
	StreamSources bool
	// Observer receives one [observe.ModelResponse] event when the turn ends,
	// with Conversation and Turn as its identity; nil is silent.
	Observer     observe.Observer
	Conversation string
	Turn         string
	// MaxFrameBytes bounds one frame of the provider's stream, in bytes;
	// 0 means [DefaultMaxFrameBytes]. Read refuses a larger frame (the turn
	// fails with [CodeInvalidStream]).
	MaxFrameBytes int
	// MaxBufferedBytes bounds what a reader holds across frames, in bytes:
	// the arguments of one tool call and the refusal text, each; 0 means
	// [DefaultMaxBufferedBytes]. Past it the turn fails with
	// [CodeInvalidStream] and the reader returns a [*refusal.Error] of code
	// frame-too-large, path /event/input or /event/message.
	MaxBufferedBytes int
}

// DefaultMaxBufferedBytes is the default of [Options.MaxBufferedBytes]:
// 1 MiB, the frame limit of docs/contract.md section 5.2, since an event
// holding more would not fit a frame.
const DefaultMaxBufferedBytes = chatprotocol.DefaultMaxFrameBytes

// DefaultMaxFrameBytes is the default bound of one provider frame: 32 MiB,
// since a Responses stream repeats the whole output in its last frame.
const DefaultMaxFrameBytes = 32 << 20
