package observe_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
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
		ctx := t.Context()
		assert.Equal(t, ctx, obs.Observe(ctx, e), "a slog observer hands the context back")
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

// The records carry the documented keys and only those that apply.
func TestSlogKeys(t *testing.T) {
	got := records(t, slog.LevelDebug,
		observe.Event{Kind: observe.EffectComplete, Phase: observe.End, Conversation: "c", Turn: "t", Effect: "e", Duration: 1500 * time.Microsecond},
		observe.Event{Kind: observe.EffectNeedsReconciliation, Phase: observe.End, Conversation: "c", Turn: "t", Effect: "e",
			Code: refusal.CodeNeedsReconciliation, Err: errors.New("gateway timeout"), Duration: time.Second},
		observe.Event{Kind: observe.ReplayRefuse, Conversation: "c", Turn: "t", Code: refusal.CodeStaleCursor, Cursor: 1, Lower: 2, Latest: 5},
		observe.Event{Kind: observe.AnswerDuplicate, Phase: observe.End, Conversation: "c", Card: "card-1", Code: refusal.CodeDuplicateAnswer, Status: "answered"},
		observe.Event{Kind: observe.StreamDeliver, Conversation: "c", Turn: "t", Seq: 7, Count: 3, Duration: time.Millisecond},
		observe.Event{Kind: observe.TurnAbort, Conversation: "c", Turn: "t", Count: 0},
	)
	assert.Equal(t, []map[string]any{
		{"level": "INFO", "msg": "effect.complete", "event": "effect.complete", "conversation": "c", "turn": "t", "effect": "e", "duration": 1.5e6},
		{"level": "ERROR", "msg": "effect.needs-reconciliation", "event": "effect.needs-reconciliation", "conversation": "c", "turn": "t", "effect": "e",
			"code": "needs-reconciliation", "duration": 1e9, "err": "gateway timeout"},
		{"level": "WARN", "msg": "replay.refuse", "event": "replay.refuse", "conversation": "c", "turn": "t", "code": "stale-cursor",
			"cursor": 1.0, "lower": 2.0, "latest": 5.0},
		{"level": "INFO", "msg": "answer.duplicate", "event": "answer.duplicate", "conversation": "c", "card": "card-1",
			"status": "answered", "code": "duplicate-answer", "duration": 0.0},
		{"level": "DEBUG", "msg": "stream.deliver", "event": "stream.deliver", "conversation": "c", "turn": "t", "seq": 7.0, "count": 3.0, "duration": 1e6},
		{"level": "INFO", "msg": "turn.abort", "event": "turn.abort", "conversation": "c", "turn": "t", "count": 0.0},
	}, got)
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
	e := observe.Event{Kind: observe.EffectComplete, Conversation: "c", Turn: "t", Effect: "e", Duration: time.Second}
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
