package observe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/Papercusp/chat-protocol-go/observe"
	"github.com/Papercusp/chat-protocol-go/refusal"
)

// records logs each event through NewSlog with a JSON handler at level and
// returns the records as maps.
func records(t *testing.T, level slog.Level, events ...observe.Event) []map[string]any {
	t.Helper()
	var buf bytes.Buffer
	obs := observe.NewSlog(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level})))
	for _, e := range events {
		obs.Observe(t.Context(), e)
	}
	var out []map[string]any
	for line := range strings.Lines(buf.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		delete(m, "time")
		out = append(out, m)
	}
	return out
}

// The records carry the documented keys and only those that apply; an
// end's duration runs from its start, on the context the start returned.
func TestSlogKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		obs := observe.NewSlog(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
		ctx := t.Context()
		effect := observe.Event{Conversation: "c", Turn: "t", Effect: "e"}
		at := func(kind observe.Kind, phase observe.Phase, e observe.Event) observe.Event {
			e.Kind, e.Phase = kind, phase
			return e
		}
		claimed := obs.Observe(ctx, at(observe.EffectClaim, observe.Start, effect))
		time.Sleep(1500 * time.Microsecond)
		obs.Observe(claimed, at(observe.EffectComplete, observe.End, effect))
		claimed = obs.Observe(ctx, at(observe.EffectClaim, observe.Start, effect))
		time.Sleep(time.Second)
		failed := effect
		failed.Code, failed.Err = refusal.CodeNeedsReconciliation, errors.New("gateway timeout")
		obs.Observe(claimed, at(observe.EffectNeedsReconciliation, observe.End, failed))
		obs.Observe(ctx, at(observe.EffectNeedsReconciliation, observe.Point, failed)) // no start: no duration
		obs.Observe(ctx, observe.Event{Kind: observe.ReplayRefuse, Conversation: "c", Turn: "t", Code: refusal.CodeStaleCursor, Cursor: 1, Lower: 2, Latest: 5})
		connected := obs.Observe(ctx, observe.Event{Kind: observe.StreamConnect, Phase: observe.Start, Conversation: "c", Turn: "t"})
		writing := obs.Observe(connected, observe.Event{Kind: observe.StreamWrite, Phase: observe.Start, Conversation: "c", Turn: "t", Seq: 7, Count: 3})
		time.Sleep(time.Millisecond)
		obs.Observe(writing, observe.Event{Kind: observe.StreamDeliver, Phase: observe.End, Conversation: "c", Turn: "t", Seq: 7, Count: 3})
		obs.Observe(connected, observe.Event{Kind: observe.StreamEnd, Phase: observe.End, Conversation: "c", Turn: "t", Seq: 7, Count: 3})
		obs.Observe(ctx, observe.Event{Kind: observe.AnswerDuplicate, Conversation: "c", Card: "card-1", Code: refusal.CodeDuplicateAnswer, Status: "answered"})
		obs.Observe(ctx, observe.Event{Kind: observe.TurnAbort, Conversation: "c", Turn: "t", Count: 0})

		var got []map[string]any
		for line := range strings.Lines(buf.String()) {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &m))
			delete(m, "time")
			got = append(got, m)
		}
		ids := func(m map[string]any) map[string]any {
			m["msg"], m["conversation"] = m["event"], "c"
			if _, ok := m["card"]; !ok {
				m["turn"] = "t"
			}
			return m
		}
		assert.Equal(t, []map[string]any{
			ids(map[string]any{"level": "DEBUG", "event": "effect.claim", "effect": "e"}),
			ids(map[string]any{"level": "INFO", "event": "effect.complete", "effect": "e", "duration": 1.5e6}),
			ids(map[string]any{"level": "DEBUG", "event": "effect.claim", "effect": "e"}),
			ids(map[string]any{"level": "ERROR", "event": "effect.needs-reconciliation", "effect": "e", "code": "needs-reconciliation", "duration": 1e9, "err": "gateway timeout"}),
			ids(map[string]any{"level": "ERROR", "event": "effect.needs-reconciliation", "effect": "e", "code": "needs-reconciliation", "err": "gateway timeout"}),
			ids(map[string]any{"level": "WARN", "event": "replay.refuse", "code": "stale-cursor", "cursor": 1.0, "lower": 2.0, "latest": 5.0}),
			ids(map[string]any{"level": "DEBUG", "event": "stream.connect"}),
			ids(map[string]any{"level": "DEBUG", "event": "stream.write", "seq": 7.0, "count": 3.0}),
			ids(map[string]any{"level": "DEBUG", "event": "stream.deliver", "seq": 7.0, "count": 3.0, "duration": 1e6}),
			ids(map[string]any{"level": "INFO", "event": "stream.end", "seq": 7.0, "count": 3.0, "duration": 1e6}),
			ids(map[string]any{"level": "INFO", "event": "answer.duplicate", "card": "card-1", "status": "answered", "code": "duplicate-answer"}),
			ids(map[string]any{"level": "INFO", "event": "turn.abort", "count": 0.0}),
		}, got)
	})
}

// The level follows LevelOf, and a disabled level writes nothing.
func TestSlogLevels(t *testing.T) {
	for _, c := range []struct {
		e    observe.Event
		want slog.Level
	}{
		{observe.Event{Kind: observe.EffectClaim, Phase: observe.Start}, slog.LevelDebug},
		{observe.Event{Kind: observe.StreamConnect, Phase: observe.Start}, slog.LevelDebug},
		{observe.Event{Kind: observe.TurnStart}, slog.LevelInfo},
		{observe.Event{Kind: observe.TurnStart, Code: refusal.CodeClaimConflict}, slog.LevelWarn},
		{observe.Event{Kind: observe.StreamDrop, Phase: observe.End}, slog.LevelWarn},
		{observe.Event{Kind: observe.AnswerDuplicate, Code: refusal.CodeDuplicateAnswer}, slog.LevelInfo},
		{observe.Event{Kind: observe.AnswerRefuse, Code: refusal.CodeCheckpointWriteFailed}, slog.LevelError},
		{observe.Event{Kind: observe.StreamRefuse, Code: refusal.CodeStoreUnavailable}, slog.LevelError},
		{observe.Event{Kind: observe.AnswerRefuse, Err: errors.New("no code")}, slog.LevelError},
	} {
		assert.Equal(t, c.want, observe.LevelOf(c.e), c.e.Kind)
	}
	assert.Empty(t, records(t, slog.LevelInfo, observe.Event{Kind: observe.EffectClaim, Phase: observe.Start}))
	assert.Len(t, records(t, slog.LevelInfo, observe.Event{Kind: observe.TurnStart}), 1)
}

// A logger that drops the level costs no allocation.
func TestSlogDisabledAllocatesNothing(t *testing.T) {
	obs := observe.NewSlog(slog.New(slog.DiscardHandler))
	ctx := context.Background()
	e := observe.Event{Kind: observe.EffectComplete, Phase: observe.End, Conversation: "c", Turn: "t", Effect: "e"}
	assert.Zero(t, testing.AllocsPerRun(100, func() { obs.Observe(ctx, e) }))
}

func TestNewSlogNil(t *testing.T) {
	assert.Nil(t, observe.NewSlog(nil))
}

// tag is an Observer that notes its name and threads a context value.
type tag struct {
	name string
	log  *[]string
}

type tagKey struct{}

func (o tag) Observe(ctx context.Context, e observe.Event) context.Context {
	prev, _ := ctx.Value(tagKey{}).(string)
	*o.log = append(*o.log, o.name+"<"+prev+">"+string(e.Kind))
	if e.Phase == observe.Start {
		return context.WithValue(ctx, tagKey{}, prev+o.name)
	}
	return ctx
}

// Join calls each observer in order, each start's context to the next, and
// drops nils.
func TestJoin(t *testing.T) {
	var log []string
	j := observe.Join(nil, tag{"a", &log}, nil, tag{"b", &log})
	ctx := j.Observe(t.Context(), observe.Event{Kind: observe.EffectClaim, Phase: observe.Start})
	j.Observe(ctx, observe.Event{Kind: observe.EffectComplete, Phase: observe.End})
	assert.Equal(t, []string{"a<>effect.claim", "b<a>effect.claim", "a<ab>effect.complete", "b<ab>effect.complete"}, log)
	assert.Equal(t, "ab", ctx.Value(tagKey{}))

	assert.Nil(t, observe.Join())
	assert.Nil(t, observe.Join(nil, nil))
	one := tag{"x", &log}
	assert.Equal(t, observe.Observer(one), observe.Join(nil, one))
}

// A model.response record carries the model call's keys; a token count
// the provider did not send (negative) is left out, never written as 0.
func TestSlogModelResponse(t *testing.T) {
	got := records(t, slog.LevelInfo,
		observe.Event{Kind: observe.ModelResponse, Conversation: "c", Turn: "t", Status: "completed", Provider: "anthropic",
			RequestModel: "claude-sonnet-4-5", ResponseModel: "claude-sonnet-4-5-20250929", ResponseID: "msg_1", InputTokens: 3084, OutputTokens: 28},
		observe.Event{Kind: observe.ModelResponse, Turn: "t", Status: "failed", Provider: "openai", InputTokens: -1, OutputTokens: -1},
	)
	require.Len(t, got, 2)
	assert.Equal(t, map[string]any{"level": "INFO", "msg": "model.response", "event": "model.response", "conversation": "c", "turn": "t",
		"status": "completed", "provider": "anthropic", "model": "claude-sonnet-4-5-20250929", "response_id": "msg_1",
		"input_tokens": float64(3084), "output_tokens": float64(28)}, got[0])
	assert.Equal(t, map[string]any{"level": "INFO", "msg": "model.response", "event": "model.response", "turn": "t",
		"status": "failed", "provider": "openai"}, got[1])
}
