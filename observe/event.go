package observe

import (
	"context"

	"github.com/Papercusp/chat-protocol-go/refusal"
)

// Kind names one moment an acting package reports, as "area.moment". The
// names are stable: they are the "event" key of [NewSlog]'s records and the
// span and event names of the otelchat module. Kinds and their phases are the
// table of the package documentation.
type Kind string

// The kinds of package recovery's TurnRecovery (docs/contract.md section
// 13.1).
const (
	// TurnStart: Start returned; Code is set when it refused.
	TurnStart Kind = "turn.start"
	// TurnEnd: Cancel or Finish returned; Status is the status asked for.
	TurnEnd Kind = "turn.end"
	// TurnAbort: the abort hook returned after a cancellation committed;
	// Count is the number of in-flight effects it was given, Err its error
	// (Code needs-reconciliation) when it failed.
	TurnAbort Kind = "turn.abort"
	// EffectClaim (a start): Execute claims the effect: reported before
	// the claim's write, or, over a store that reads and claims in one call
	// (a recovery Dispatcher), once that call returned the claim.
	EffectClaim Kind = "effect.claim"
	// EffectAdmit: the store admitted the effect under its fence; the
	// launch follows.
	EffectAdmit Kind = "effect.admit"
	// EffectLaunch: the host's Launcher started the execution.
	EffectLaunch Kind = "effect.launch"
	// EffectComplete (an end): the effect's result is stored.
	EffectComplete Kind = "effect.complete"
	// EffectNeedsReconciliation (an end, or a point when Execute refused
	// before claiming): the outcome is unknown; Code needs-reconciliation.
	EffectNeedsReconciliation Kind = "effect.needs-reconciliation"
	// EffectRefuse (an end, or a point before the claim): Execute refused
	// with Code, such as claim-conflict or turn-not-running.
	EffectRefuse Kind = "effect.refuse"
	// EffectReconcile: Reconcile returned; Code is set when it refused.
	EffectReconcile Kind = "effect.reconcile"
)

// The kinds of replay windows and of recovery's Resume (docs/contract.md
// section 11).
const (
	// ReplayServe: a window served the suffix after Cursor: Count frames,
	// with the bounds Lower and Latest.
	ReplayServe Kind = "replay.serve"
	// ReplayRefuse: a read was refused with Code: stale-cursor or
	// cursor-ahead for the cursor, or sequence-gap, sequence-reordered or
	// foreign-frame for a suffix recovery refused; Cursor, Lower and Latest
	// as for [ReplayServe].
	ReplayRefuse Kind = "replay.refuse"
)

// The kinds of package interactions' Resolver (docs/contract.md section
// 13.2). Card is
// the card's correlation id; the submitted value is never reported.
const (
	// AnswerSubmit (a start): Answer was called.
	AnswerSubmit Kind = "answer.submit"
	// AnswerStore (an end): the answer was stored; Status is the card's
	// status after it.
	AnswerStore Kind = "answer.store"
	// AnswerDuplicate (an end): this very submission was already stored
	// (Code duplicate-answer).
	AnswerDuplicate Kind = "answer.duplicate"
	// AnswerLate (an end): the card had closed or changed (Code
	// already-answered, answer-expired, card-cancelled, card-superseded,
	// stale-revision or schema-mismatch).
	AnswerLate Kind = "answer.late"
	// AnswerRefuse (an end): any other refusal, with Code.
	AnswerRefuse Kind = "answer.refuse"
)

// The kinds of the stream handler (docs/contract.md section 14).
const (
	// StreamConnect (a start): a request for a turn's stream arrived.
	StreamConnect Kind = "stream.connect"
	// StreamResume: the request resumes after Cursor (Last-Event-ID).
	StreamResume Kind = "stream.resume"
	// StreamWrite (a start): the handler is about to write Count frames
	// the window handed over, up to seq Seq.
	StreamWrite Kind = "stream.write"
	// StreamDeliver (the end of a [StreamWrite]): Count frames up to seq Seq
	// reached the connection; Err is set when the write failed. From the
	// [StreamWrite] to it is the delivery latency.
	StreamDeliver Kind = "stream.deliver"
	// StreamRefuse (an end): the request was answered with a refusal
	// (Code, and the bounds for a stale or ahead cursor).
	StreamRefuse Kind = "stream.refuse"
	// StreamEnd (an end): the stream ended: the turn ended, the client went
	// away or the handler closed; Count frames were written, up to Seq.
	StreamEnd Kind = "stream.end"
	// StreamDrop (an end): a slow reader did not take a frame within the
	// write timeout and was dropped; it resumes by Last-Event-ID.
	StreamDrop Kind = "stream.drop"
)

// The kind of a turn's model call, reported by the provider stream readers
// of package ingest (docs/contract.md section 17).
const (
	// ModelResponse: the provider's stream of a turn ended; Status is the
	// turn's lifecycle status (completed or failed), with Provider,
	// RequestModel, ResponseModel, ResponseID and the token counts.
	ModelResponse Kind = "model.response"
)

// Phase is how an Event pairs with others: a start opens what an end
// closes, on the context the start's Observe returned; a point stands alone.
type Phase uint8

// The phases. [EffectClaim], [AnswerSubmit], [StreamConnect] and [StreamWrite]
// are always starts; [EffectComplete], the answer outcomes and [StreamDeliver],
// [StreamRefuse], [StreamEnd] and [StreamDrop] always ends;
// [EffectNeedsReconciliation] and [EffectRefuse] are ends after an
// [EffectClaim] and points when Execute refused before claiming; every other
// kind is a point.
const (
	Point Phase = iota
	Start
	End
)

// Event is one reported moment: its Kind and what identifies it. Fields that
// do not apply to a kind are zero. An Event never carries a card's submitted
// value, a tool's input or a result's bytes; Err is the cause as the
// reporting package returned it to its caller, which may quote a store's own
// error text: fit for logs, not for a client.
//
// An Event carries no time: the packages never read the clock for an
// observer, so that a silent or cheap one costs no clock reading. A duration
// is the observer's to measure, from a start to its end ([NewSlog] and the
// otelchat module do).
type Event struct {
	Kind Kind
	// Conversation and Turn identify the turn (recovery, replay, stream);
	// Conversation alone with Card for interactions.
	Conversation string
	Turn         string
	// Effect is the effect id (effect.* kinds).
	Effect string
	// Card is the card's correlation id (answer.* kinds).
	Card string
	// Status is the turn status asked for (turn.end) or the card's status
	// after an answer (answer.store, answer.duplicate).
	Status string
	// Code is the refusal code, "" when there was none.
	Code refusal.Code
	// Cursor is the cursor a read or a stream resumed after; Lower and
	// Latest are the window's bounds (replay.*, stream.refuse).
	Cursor int64
	Lower  int64
	Latest int64
	// Seq is the seq of the last frame delivered (stream.deliver,
	// stream.end).
	Seq int64
	// Count is how many: frames served or delivered, in-flight effects
	// aborted.
	Count int
	// Err is the error behind Code, or an error without a code.
	Err error
	// Phase tells a start, an end or a point.
	Phase Phase
	// Provider, RequestModel, ResponseModel and ResponseID name a turn's
	// model call (model.response): the provider ("openai", "anthropic"),
	// the model the host asked for and the one that answered, and the
	// provider's response id; "" when unknown.
	Provider      string
	RequestModel  string
	ResponseModel string
	ResponseID    string
	// InputTokens (cached ones included) and OutputTokens are the
	// provider's final token counts (model.response); negative when the
	// provider sent none.
	InputTokens  int64
	OutputTokens int64
}

// Observer receives the moments an acting package reports. Observe is
// called synchronously, on the goroutine doing the work, and must be safe for
// concurrent use and quick: it must not block on I/O of its own.
//
// Observe returns the context the reporting package goes on with: for a
// start (e.Phase == Start) it may return a context carrying what the
// matching end needs (a span), and the package reports every later moment of
// the same work, and exactly one end, on that context. For every other event
// it should return ctx itself. It must never return nil.
//
// A nil Observer in a package's options means silent, at the cost of one
// comparison per moment.
type Observer interface {
	Observe(ctx context.Context, e Event) context.Context
}

// StartOf returns the kind of the start an end of kind k closes, or "" for
// a kind that never ends a start.
func StartOf(k Kind) Kind {
	switch k {
	case EffectComplete, EffectNeedsReconciliation, EffectRefuse:
		return EffectClaim
	case AnswerStore, AnswerDuplicate, AnswerLate, AnswerRefuse:
		return AnswerSubmit
	case StreamDeliver:
		return StreamWrite
	case StreamRefuse, StreamEnd, StreamDrop:
		return StreamConnect
	}
	return ""
}
