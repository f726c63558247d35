package otelchat_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	chatprotocol "github.com/Papercusp/chat-protocol-go"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/Papercusp/chat-protocol-go/cards"
	"github.com/Papercusp/chat-protocol-go/interactions"
	"github.com/Papercusp/chat-protocol-go/interactions/answerhttp"
	"github.com/Papercusp/chat-protocol-go/interactions/interactionstest"
	"github.com/Papercusp/chat-protocol-go/interactions/jsonschema"
	"github.com/Papercusp/chat-protocol-go/otelchat"
	"github.com/Papercusp/chat-protocol-go/recovery"
	"github.com/Papercusp/chat-protocol-go/recovery/recoverytest"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// telemetry is an Observer over an in-memory span recorder and a manual
// metric reader.
type telemetry struct {
	obs    *otelchat.Observer
	spans  *tracetest.SpanRecorder
	reader *sdkmetric.ManualReader
	tp     *sdktrace.TracerProvider
}

func newTelemetry(t *testing.T) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	var err error
	tel.obs, err = otelchat.New(&otelchat.Options{TracerProvider: tel.tp, MeterProvider: mp, Propagator: propagation.TraceContext{}})
	require.NoError(t, err)
	return tel
}

// ended returns the ended spans named name, in the order they ended.
func (tel *telemetry) ended(name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range tel.spans.Ended() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// attrs returns a span's attributes as a map.
func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

func eventNames(s sdktrace.ReadOnlySpan) []string {
	var names []string
	for _, e := range s.Events() {
		names = append(names, e.Name)
	}
	return names
}

// metrics collects the metrics, keyed by name.
func (tel *telemetry) metrics(t *testing.T) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(t.Context(), &rm))
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, otelchat.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// sums returns a counter's points as attribute set -> value.
func sums(t *testing.T, data metricdata.Aggregation) map[attribute.Distinct]int64 {
	t.Helper()
	sum, ok := data.(metricdata.Sum[int64])
	require.True(t, ok, "%T", data)
	out := map[attribute.Distinct]int64{}
	for _, p := range sum.DataPoints {
		out[p.Attributes.Equivalent()] = p.Value
	}
	return out
}

func set(kv ...attribute.KeyValue) attribute.Distinct {
	s := attribute.NewSet(kv...)
	return s.Equivalent()
}

var (
	caller = "alice"
	turn   = recovery.TurnRef{Conversation: "conv-1", Turn: "turn-1"}
)

func ref(effect string) recovery.EffectRef { return recovery.EffectRef{Turn: turn, Effect: effect} }

// A turn of two effects under the host's span: one completes, the other is
// in flight when the turn is cancelled and is then reconciled. Each effect
// is one chat.effect span, child of the host's span, with its admission and
// launch as events; the turn's start, end and abort and the reconcile are
// spans of their own beside them; the counters and the duration histogram
// count what happened.
func TestTurnSpansAndMetrics(t *testing.T) {
	tel := newTelemetry(t)
	launched := make(chan recovery.EffectRef, 2)
	host := recoverytest.NewHost(&recoverytest.HostOptions{
		OnLaunch: func(_ context.Context, e recovery.EffectRef) { launched <- e },
	})
	host.Grant(caller, turn)
	rec := recovery.New(recovery.Host{Store: recoverytest.NewDB(nil).Open("w1"), Authorizer: host, Aborter: host},
		&recovery.Options{Worker: "w1", Lease: time.Minute, Observer: tel.obs})

	ctx, root := tel.tp.Tracer("host").Start(t.Context(), "host.turn")
	_, err := rec.Start(ctx, caller, turn, []string{"call-a", "call-b"})
	require.NoError(t, err)

	execute := func(id string) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := rec.Execute(ctx, caller, ref(id), host)
			done <- err
		}()
		require.Equal(t, ref(id), <-launched)
		return done
	}
	done := execute("call-a")
	host.Exec(ref("call-a")).Complete(recovery.Result{Data: []byte(`{"ok":true}`)})
	require.NoError(t, <-done)
	done = execute("call-b")
	require.NoError(t, rec.Cancel(ctx, caller, turn))
	require.ErrorIs(t, <-done, refusal.ErrNeedsReconciliation)
	_, err = rec.Reconcile(ctx, caller, ref("call-b"), func(context.Context, recovery.EffectRef) (recovery.Result, error) {
		return recovery.Result{Data: []byte(`{"sent":false}`)}, nil
	})
	require.NoError(t, err)
	root.End()

	rootID := root.SpanContext().SpanID()
	var names []string
	for _, s := range tel.spans.Ended() {
		names = append(names, s.Name())
		assert.Equal(t, root.SpanContext().TraceID(), s.SpanContext().TraceID(), s.Name())
		if s.Name() != "host.turn" {
			assert.Equal(t, rootID, s.Parent().SpanID(), "%s is a child of the host's span", s.Name())
			assert.Equal(t, "turn-1", attrs(s)[otelchat.KeyTurn].AsString(), s.Name())
			assert.Equal(t, "conv-1", attrs(s)[otelchat.KeyConversation].AsString(), s.Name())
		}
	}
	// b's outcome and the abort's span race (the abort frees b): compare
	// as sets, and order only what one caused.
	assert.ElementsMatch(t, []string{"chat.turn.start", "chat.effect", "chat.turn.end", "chat.turn.abort", "chat.effect", "chat.effect.reconcile", "host.turn"}, names)

	effects := tel.ended("chat.effect")
	require.Len(t, effects, 2)
	a, b := effects[0], effects[1]
	assert.Equal(t, "call-a", attrs(a)[otelchat.KeyEffect].AsString())
	assert.Equal(t, "effect.complete", attrs(a)[otelchat.KeyEvent].AsString())
	assert.Equal(t, []string{"effect.admit", "effect.launch"}, eventNames(a))
	assert.Equal(t, codes.Unset, a.Status().Code)

	assert.Equal(t, "call-b", attrs(b)[otelchat.KeyEffect].AsString())
	assert.Equal(t, "effect.needs-reconciliation", attrs(b)[otelchat.KeyEvent].AsString())
	assert.Equal(t, "needs-reconciliation", attrs(b)[otelchat.KeyCode].AsString())
	assert.Equal(t, []string{"effect.admit", "effect.launch", "exception"}, eventNames(b))
	assert.Equal(t, codes.Error, b.Status().Code)
	assert.Equal(t, "needs-reconciliation", b.Status().Description)
	end := tel.ended("chat.turn.end")[0]
	assert.False(t, b.EndTime().Before(end.EndTime()), "b ends after the cancellation committed")
	assert.False(t, b.StartTime().Before(a.EndTime()), "b was claimed after a completed")
	assert.Equal(t, "cancelled", attrs(end)[otelchat.KeyStatus].AsString())
	assert.Equal(t, int64(1), attrs(tel.ended("chat.turn.abort")[0])[otelchat.KeyCount].AsInt64(), "b was in flight")
	assert.Equal(t, codes.Unset, tel.ended("chat.effect.reconcile")[0].Status().Code)

	m := tel.metrics(t)
	assert.Equal(t, map[attribute.Distinct]int64{set(): 2}, sums(t, m["chat.effect.launches"]))
	assert.Equal(t, map[attribute.Distinct]int64{set(otelchat.KeyCode.String("")): 1}, sums(t, m["chat.effect.reconciliations"]))
	assert.Equal(t, map[attribute.Distinct]int64{
		set(otelchat.KeyEvent.String("effect.needs-reconciliation"), otelchat.KeyCode.String("needs-reconciliation")): 1,
	}, sums(t, m["chat.refusals"]))
	hist, ok := m["chat.effect.duration"].(metricdata.Histogram[float64])
	require.True(t, ok)
	counts := map[string]uint64{}
	for _, p := range hist.DataPoints {
		v, _ := p.Attributes.Value(otelchat.KeyEvent)
		counts[v.AsString()] = p.Count
		assert.Positive(t, p.Sum)
	}
	assert.Equal(t, map[string]uint64{"effect.complete": 1, "effect.needs-reconciliation": 1}, counts)
}

// A card answer over HTTP: Handler takes the caller's trace context from
// the traceparent header, so the chat.answer span is a child of the client's
// span, ended with the outcome; a duplicate is not an error, a late answer
// is, and is counted by code.
func TestAnswerSpanFollowsTheRequest(t *testing.T) {
	tel := newTelemetry(t)
	db := interactionstest.NewDB()
	schemas := jsonschema.NewRegistry()
	schema := interactions.SchemaRef{ID: "ship-it", Revision: 1}
	require.NoError(t, schemas.Register(schema, []byte(`{"type":"object","properties":{"optionId":{"enum":["yes","no"]}},"required":["optionId"]}`)))
	res, err := interactions.New(db.Open(nil), schemas, &interactions.Options{CardRules: chatprotocol.ValidateCardSpec, Observer: tel.obs})
	require.NoError(t, err)
	alice := interactions.Caller{Principal: "alice"}
	db.Grant(alice, "conv-1")
	_, err = res.Open(t.Context(), interactions.NewCard{Key: interactions.Key{Conversation: "conv-1", CorrelationID: "card-1"},
		Answerer: alice, Spec: cards.CardSpec{Prompt: "Ship it?"}, Schema: schema})
	require.NoError(t, err)
	h, err := answerhttp.NewHandler(res, &answerhttp.HandlerOptions{Caller: func(*http.Request) (interactions.Caller, error) { return alice, nil }})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("POST /conversations/{conversation}/cards/{card}/answer", tel.obs.Handler(h))

	client := tel.tp.Tracer("client")
	post := func(key, option string) (trace.SpanContext, int) {
		ctx, span := client.Start(t.Context(), "client.post")
		defer span.End()
		req := httptest.NewRequestWithContext(context.Background(), "POST", "/conversations/conv-1/cards/card-1/answer",
			strings.NewReader(`{"action":"submit","correlationId":"card-1","value":{"optionId":"`+option+`"}}`))
		req.Header.Set("Idempotency-Key", key)
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(req.Header))
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, req)
		return span.SpanContext(), w.Code
	}
	var parents []trace.SpanContext
	for _, p := range []struct{ key, option string }{{"k-1", "yes"}, {"k-1", "yes"}, {"k-2", "no"}} {
		sc, status := post(p.key, p.option)
		parents = append(parents, sc)
		assert.NotZero(t, status)
	}

	answers := tel.ended("chat.answer")
	require.Len(t, answers, 3)
	type seen struct {
		event, status, code string
		err                 codes.Code
	}
	var got []seen
	for i, s := range answers {
		assert.Equal(t, parents[i].SpanID(), s.Parent().SpanID(), "answer %d is a child of its request's span", i)
		assert.Equal(t, parents[i].TraceID(), s.SpanContext().TraceID())
		assert.True(t, s.Parent().IsRemote(), "the parent came over HTTP")
		a := attrs(s)
		assert.Equal(t, "card-1", a[otelchat.KeyCard].AsString())
		assert.Equal(t, "conv-1", a[otelchat.KeyConversation].AsString())
		got = append(got, seen{a[otelchat.KeyEvent].AsString(), a[otelchat.KeyStatus].AsString(), a[otelchat.KeyCode].AsString(), s.Status().Code})
	}
	assert.Equal(t, []seen{
		{"answer.store", "answered", "", codes.Unset},
		{"answer.duplicate", "answered", "duplicate-answer", codes.Unset},
		{"answer.late", "", "already-answered", codes.Error},
	}, got)
	assert.Equal(t, map[attribute.Distinct]int64{
		set(otelchat.KeyEvent.String("answer.duplicate"), otelchat.KeyCode.String("duplicate-answer")): 1,
		set(otelchat.KeyEvent.String("answer.late"), otelchat.KeyCode.String("already-answered")):      1,
	}, sums(t, tel.metrics(t)["chat.refusals"]))
}

// Outside any trace, a moment that opens no span of its own is counted
// only: no root span per window read of a background goroutine. A start
// still opens its span.
func TestMomentsOutsideATraceAreCountedOnly(t *testing.T) {
	tel := newTelemetry(t)
	host := recoverytest.NewHost(&recoverytest.HostOptions{
		Outcome: func(recovery.EffectRef) (recovery.Result, error) { return recovery.Result{}, nil },
	})
	host.Grant(caller, turn)
	rec := recovery.New(recovery.Host{Store: recoverytest.NewDB(nil).Open("w1"), Authorizer: host},
		&recovery.Options{Worker: "w1", Observer: tel.obs})
	ctx := context.Background()
	_, err := rec.Start(ctx, caller, turn, []string{"call-a"})
	require.NoError(t, err)
	_, err = rec.Start(ctx, caller, turn, []string{"call-other"})
	require.ErrorIs(t, err, refusal.ErrClaimConflict)
	_, err = rec.Execute(ctx, caller, ref("call-a"), host)
	require.NoError(t, err)

	var names []string
	for _, s := range tel.spans.Ended() {
		names = append(names, s.Name())
		assert.False(t, s.Parent().IsValid(), "a root span")
	}
	assert.Equal(t, []string{"chat.effect"}, names)
	assert.Equal(t, map[attribute.Distinct]int64{
		set(otelchat.KeyEvent.String("turn.start"), otelchat.KeyCode.String("claim-conflict")): 1,
	}, sums(t, tel.metrics(t)["chat.refusals"]))
}

// The instrumentation scope is the package's import path, as OpenTelemetry
// names scopes, so that it follows the package if it moves.
func TestScopeNameIsTheImportPath(t *testing.T) {
	assert.Equal(t, reflect.TypeFor[otelchat.Observer]().PkgPath(), otelchat.ScopeName)
}
