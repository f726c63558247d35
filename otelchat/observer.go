// Package otelchat turns what the module's acting packages report to an
// [observe.Observer] into OpenTelemetry spans and metrics: spans that follow a
// turn's effects, card answers and streams, with the trace context of the
// HTTP request they serve, and counters and histograms an operator alerts on
// (docs/contract.md sections 11 to 14). It is a module of its own so that
// the core module has no tracing dependency, named so that it imports next
// to go.opentelemetry.io/otel without a rename:
//
//	import "github.com/Papercusp/chat-protocol-go/otelchat"
//
//	obs, err := otelchat.New(nil) // the global TracerProvider, MeterProvider and propagator
//	rec := recovery.New(host, &recovery.Options{Observer: obs})
//	res, err := interactions.New(store, validator, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec, Observer: obs})
//	mux.Handle("/conversations/{conversation}/cards/{card}/answer", obs.Handler(answers))
//
// [Observer.Handler] takes the trace context (W3C traceparent, by default)
// from each request, so that the spans of the answer or the stream it
// serves are children of the caller's span; a host that already runs
// otelhttp needs no Handler.
//
// # Spans
//
// A start opens a span that its end closes, on the context the start
// returned: "chat.effect" from effect.claim to the effect's outcome,
// "chat.answer" from answer.submit to its outcome, "chat.stream" from
// stream.connect to stream.end, stream.drop or stream.refuse. The moments in
// between (effect.admit, effect.launch, stream.resume, replay.serve …) are
// events of that span, named by their kind. A moment reported outside any
// such span (turn.start, turn.end, turn.abort, effect.reconcile, a refusal
// before a claim, replay.serve of a recovery Resume) is a span of its own,
// "chat." followed by its kind ("chat.turn.start"), a child of the context's
// span when the context carries one, and only counted when it carries none
// (a window read by a background goroutine starts no trace). A span with a
// refusal code other than duplicate-answer has status Error with the code
// as description, and the cause as an exception event.
//
// A model.response (a provider stream read by package ingest) sets the
// OpenTelemetry GenAI attributes on the turn's span, the span of its
// context: gen_ai.operation.name ("chat"), gen_ai.provider.name,
// gen_ai.request.model, gen_ai.response.model, gen_ai.response.id,
// gen_ai.usage.input_tokens and gen_ai.usage.output_tokens, each where the
// stream gave it (semantic conventions 1.40). Under a context whose span is
// not recorded here it is a span of its own, "chat.model.response".
//
// The attributes are chat.conversation.id, chat.turn.id, chat.effect.id,
// chat.card.id, chat.status, chat.refusal.code, chat.cursor,
// chat.window.lower, chat.window.latest, chat.seq and chat.count, each where
// the event has it (see package observe).
//
// # Metrics
//
// Metrics carry no identity, only the kind ("chat.event") and the code
// ("chat.refusal.code"), so their cardinality stays bounded:
//
//	chat.effect.launches             counter    effects launched (effect.launch)
//	chat.effect.reconciliations      counter    Reconcile calls, by chat.refusal.code ("" when settled)
//	chat.refusals                    counter    every event with a refusal code, by chat.event and chat.refusal.code
//	chat.effect.duration             histogram  seconds from effect.claim to the outcome, by chat.event
//	chat.stream.delivery.latency     histogram  seconds from stream.write to stream.deliver
package otelchat

import (
	"context"
	"net/http"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// ScopeName is the instrumentation scope of the tracer and the meter: the
// package's import path.
const ScopeName = "github.com/Papercusp/chat-protocol-go/otelchat"

// The attribute keys of spans and metrics.
const (
	KeyConversation = attribute.Key("chat.conversation.id")
	KeyTurn         = attribute.Key("chat.turn.id")
	KeyEffect       = attribute.Key("chat.effect.id")
	KeyCard         = attribute.Key("chat.card.id")
	KeyStatus       = attribute.Key("chat.status")
	KeyCode         = attribute.Key("chat.refusal.code")
	KeyCursor       = attribute.Key("chat.cursor")
	KeyLower        = attribute.Key("chat.window.lower")
	KeyLatest       = attribute.Key("chat.window.latest")
	KeySeq          = attribute.Key("chat.seq")
	KeyCount        = attribute.Key("chat.count")
	KeyEvent        = attribute.Key("chat.event")
)

// Options configures an Observer; nil, or a nil field, means the global one
// of go.opentelemetry.io/otel.
type Options struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	Propagator     propagation.TextMapPropagator
}

// Observer is an [observe.Observer] that records spans and metrics, and an
// HTTP middleware that takes the trace context from requests. It is safe
// for concurrent use; make one with New.
type Observer struct {
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator

	launches        metric.Int64Counter
	reconciliations metric.Int64Counter
	refusals        metric.Int64Counter
	effectDuration  metric.Float64Histogram
	deliveryLatency metric.Float64Histogram
}

var _ observe.Observer = (*Observer)(nil)

// New returns an Observer over the providers of opts (nil: the global
// ones). It fails only when the meter refuses an instrument.
func New(opts *Options) (*Observer, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.TracerProvider == nil {
		o.TracerProvider = otel.GetTracerProvider()
	}
	if o.MeterProvider == nil {
		o.MeterProvider = otel.GetMeterProvider()
	}
	if o.Propagator == nil {
		o.Propagator = otel.GetTextMapPropagator()
	}
	meter := o.MeterProvider.Meter(ScopeName)
	obs := &Observer{tracer: o.TracerProvider.Tracer(ScopeName), propagator: o.Propagator}
	// Each instrument is a counter or a histogram: the field it goes in.
	instruments := []struct {
		name, desc, unit string
		counter          *metric.Int64Counter
		histogram        *metric.Float64Histogram
	}{
		{name: "chat.effect.launches", desc: "Effects launched.", unit: "{effect}", counter: &obs.launches},
		{name: "chat.effect.reconciliations", desc: "Reconcile calls, by refusal code (none when the effect was settled).", unit: "{call}", counter: &obs.reconciliations},
		{name: "chat.refusals", desc: "Reported moments with a refusal code, by kind and code.", unit: "{refusal}", counter: &obs.refusals},
		{name: "chat.effect.duration", desc: "Time from an effect's claim to its outcome.", unit: "s", histogram: &obs.effectDuration},
		{name: "chat.stream.delivery.latency", desc: "Time from the window handing frames to the stream handler to their write returning.", unit: "s", histogram: &obs.deliveryLatency},
	}
	for _, in := range instruments {
		desc, unit := metric.WithDescription(in.desc), metric.WithUnit(in.unit)
		var err error
		if in.counter != nil {
			*in.counter, err = meter.Int64Counter(in.name, desc, unit)
		} else {
			*in.histogram, err = meter.Float64Histogram(in.name, desc, unit)
		}
		if err != nil {
			return nil, err
		}
	}
	return obs, nil
}

// Handler returns next with the trace context of each request (the
// propagator's headers) in the request's context, so that the spans of the
// answer or the stream next serves are children of the caller's span.
func (o *Observer) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := o.propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// open is what a start leaves in its context: its kind, its time and, for
// the starts that have one, its span.
type open struct {
	kind  observe.Kind
	start time.Time
	span  trace.Span // nil for stream.write
}

type openKey struct{}

// spanNames are the span names of the starts that open one.
var spanNames = map[observe.Kind]string{
	observe.EffectClaim:   "chat.effect",
	observe.AnswerSubmit:  "chat.answer",
	observe.StreamConnect: "chat.stream",
}

// Observe records e; see the package documentation.
func (o *Observer) Observe(ctx context.Context, e observe.Event) context.Context {
	if e.Code != "" {
		o.refusals.Add(ctx, 1, metric.WithAttributes(KeyEvent.String(string(e.Kind)), KeyCode.String(string(e.Code))))
	}
	switch e.Kind {
	case observe.EffectLaunch:
		o.launches.Add(ctx, 1)
	case observe.EffectReconcile:
		o.reconciliations.Add(ctx, 1, metric.WithAttributes(KeyCode.String(string(e.Code))))
	}
	if e.Kind == observe.ModelResponse {
		if span := trace.SpanFromContext(ctx); span.IsRecording() {
			span.SetAttributes(genAI(e)...)
			return ctx
		}
	}
	cur, _ := ctx.Value(openKey{}).(*open)
	switch e.Phase {
	case observe.Start:
		return o.start(ctx, e)
	case observe.End:
		if cur != nil && cur.kind == observe.StartOf(e.Kind) {
			o.end(ctx, cur, e)
			return ctx
		}
	}
	if cur != nil && cur.span != nil {
		cur.span.AddEvent(string(e.Kind), trace.WithAttributes(attributes(e)...))
		return ctx
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx // outside any trace (a parked stream's reads): counted only
	}
	_, span := o.tracer.Start(ctx, "chat."+string(e.Kind), trace.WithAttributes(attributes(e)...))
	setStatus(span, e)
	span.End()
	return ctx
}

// start opens what e starts.
func (o *Observer) start(ctx context.Context, e observe.Event) context.Context {
	st := &open{kind: e.Kind, start: time.Now()}
	if name, ok := spanNames[e.Kind]; ok {
		ctx, st.span = o.tracer.Start(ctx, name, trace.WithAttributes(attributes(e)...))
	}
	return context.WithValue(ctx, openKey{}, st)
}

// end closes cur with e.
func (o *Observer) end(ctx context.Context, cur *open, e observe.Event) {
	elapsed := time.Since(cur.start).Seconds()
	switch cur.kind {
	case observe.EffectClaim:
		o.effectDuration.Record(ctx, elapsed, metric.WithAttributes(KeyEvent.String(string(e.Kind))))
	case observe.StreamWrite:
		o.deliveryLatency.Record(ctx, elapsed)
	}
	if cur.span == nil {
		return
	}
	cur.span.SetAttributes(KeyEvent.String(string(e.Kind)))
	cur.span.SetAttributes(attributes(e)...)
	setStatus(cur.span, e)
	cur.span.End()
}

// setStatus marks span as failed for a refusal, and records the cause.
func setStatus(span trace.Span, e observe.Event) {
	if e.Err != nil {
		span.RecordError(e.Err)
	}
	if e.Code != "" && e.Code != refusal.CodeDuplicateAnswer || e.Code == "" && e.Err != nil {
		span.SetStatus(codes.Error, string(e.Code))
	}
}

// attributes returns the attributes of what e has.
func attributes(e observe.Event) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 8)
	str := func(k attribute.Key, v string) {
		if v != "" {
			a = append(a, k.String(v))
		}
	}
	str(KeyConversation, e.Conversation)
	str(KeyTurn, e.Turn)
	str(KeyEffect, e.Effect)
	str(KeyCard, e.Card)
	str(KeyStatus, e.Status)
	str(KeyCode, string(e.Code))
	switch e.Kind {
	case observe.ReplayServe, observe.ReplayRefuse, observe.StreamResume, observe.StreamRefuse:
		a = append(a, KeyCursor.Int64(e.Cursor), KeyLower.Int64(e.Lower), KeyLatest.Int64(e.Latest))
	}
	switch e.Kind {
	case observe.ReplayServe, observe.TurnAbort, observe.StreamWrite, observe.StreamDeliver, observe.StreamEnd, observe.StreamDrop:
		a = append(a, KeyCount.Int(e.Count))
	}
	switch e.Kind {
	case observe.StreamWrite, observe.StreamDeliver, observe.StreamEnd, observe.StreamDrop:
		a = append(a, KeySeq.Int64(e.Seq))
	case observe.ModelResponse:
		a = append(a, genAI(e)...)
	}
	return a
}

// genAI returns the GenAI attributes of a model.response.
func genAI(e observe.Event) []attribute.KeyValue {
	a := make([]attribute.KeyValue, 0, 7)
	a = append(a, semconv.GenAIOperationNameChat)
	for _, kv := range [...]struct {
		k attribute.Key
		v string
	}{
		{semconv.GenAIProviderNameKey, e.Provider},
		{semconv.GenAIRequestModelKey, e.RequestModel},
		{semconv.GenAIResponseModelKey, e.ResponseModel},
		{semconv.GenAIResponseIDKey, e.ResponseID},
	} {
		if kv.v != "" {
			a = append(a, kv.k.String(kv.v))
		}
	}
	if e.InputTokens >= 0 {
		a = append(a, semconv.GenAIUsageInputTokensKey.Int64(e.InputTokens))
	}
	if e.OutputTokens >= 0 {
		a = append(a, semconv.GenAIUsageOutputTokensKey.Int64(e.OutputTokens))
	}
	return a
}
